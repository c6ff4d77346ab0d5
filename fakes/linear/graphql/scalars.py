"""Linear's custom scalars: ``DateTime`` (ISO 8601, milliseconds, ``Z``),
``DateTimeOrDuration`` (a date, or a duration like ``-P2W`` counted back from now) and
``UUID``."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from ariadne import ScalarType

from fakes.linear.filters import when
from fakes.linear.models import aware as _aware

datetime_scalar = ScalarType("DateTime")


@datetime_scalar.serializer
def _serialize_datetime(value: datetime) -> str:
    return _aware(value).astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@datetime_scalar.value_parser
def _parse_datetime(value: Any) -> datetime:
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


date_or_duration = ScalarType("DateTimeOrDuration")


@date_or_duration.value_parser
def _parse_date_or_duration(value: Any) -> str:
    when(str(value), datetime.now(UTC))  # refuse what is neither, at validation time
    return str(value)


uuid_scalar = ScalarType("UUID")


@uuid_scalar.value_parser
def _parse_uuid(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"Could not coerce value {value!r} to UUID")
    return str(uuid.UUID(value))  # ValueError for anything else: an identifier is not one


def scalars() -> list[ScalarType]:
    """The bindables for every custom scalar of the SDL."""
    return [datetime_scalar, date_or_duration, uuid_scalar]

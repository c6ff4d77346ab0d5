"""Reading the project's file formats: YAML or JSON into pydantic models, one clear error.

Every user-facing file (case, harness spec, snapshot manifest, world state) goes through
:func:`load_model`, so that all of them report problems the same way: the file, the field
as a dotted path (``hidden_tests.fail_to_pass[0]``) and what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from replay.base.errors import InputError

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """Base for every persisted model: unknown fields are errors, models are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as strings and rejects duplicate keys.

    Timestamps are left to pydantic so a naive one is reported as such instead of being
    silently read as local time; a duplicate key is almost always a mistake that YAML would
    otherwise resolve by keeping the last value.
    """


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(path, "file not found") from exc
    except IsADirectoryError as exc:
        raise InputError(path, "is a directory, expected a file") from exc
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from exc


def parse_yaml(path: Path, text: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else None
        raise InputError(path, f"malformed YAML: {exc.problem or exc.context}", where) from exc
    except yaml.YAMLError as exc:
        raise InputError(path, f"malformed YAML: {exc}") from exc


def parse_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"malformed JSON: {exc.msg}", f"line {exc.lineno} column {exc.colno}"
        ) from exc


def field_path(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as ``a.b[0].c``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def validation_to_input_error(path: Path, exc: ValidationError) -> InputError:
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = tuple(p for p in first["loc"] if not _is_union_tag(p))
    problem = _describe(first)
    if len(errors) > 1:
        more = len(errors) - 1
        problem += f" (and {more} more problem{'s' if more > 1 else ''})"
    return InputError(path, problem, field_path(loc))


def _is_union_tag(part: int | str) -> bool:
    # pydantic inserts the union member's name into the location ("function-after[...]").
    return isinstance(part, str) and ("[" in part and "]" in part)


def _describe(error: Any) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "timezone_aware":
        return "timestamp has no timezone (write e.g. 2026-03-10T09:00:00Z)"
    msg = str(error["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    got = error.get("input")
    if kind.endswith("_type") or kind.endswith("_parsing"):
        msg += f", got {_short(got)}"
    return msg[0].lower() + msg[1:] if msg else kind


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def load_model(path: Path, model: type[M], *, context: dict[str, Any] | None = None) -> M:
    """Read ``path`` (YAML, or JSON when it ends in ``.json``) and validate it as ``model``."""
    text = read_text(path)
    data = parse_json(path, text) if path.suffix == ".json" else parse_yaml(path, text)
    return validate_data(path, data, model, context=context)


def validate_data(
    path: Path, data: Any, model: type[M], *, context: dict[str, Any] | None = None
) -> M:
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise InputError(path, f"expected a mapping at the top level, got {kind}")
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise validation_to_input_error(path, exc) from exc


def dump_json(data: Any) -> str:
    """The one JSON spelling for files whose hashes we record: sorted keys, two-space indent."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

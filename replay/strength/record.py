"""A case's strength kept with the case version: ``strength.json`` beside its ``case.yaml``.

``replay case strength --record`` writes the measurement there; it carries the case digest
(:func:`replay.base.case.case_digest`: the case file, its snapshot's manifest and both
patches), so a case changed since is told as never measured at its current version, as a
calibration is (``replay case stale`` says which).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from replay.base.case import LoadedCase, case_digest
from replay.base.errors import InputError
from replay.strength.model import Acceptance, CaseStrength

log = logging.getLogger(__name__)

STRENGTH_FILE = "strength.json"


def strength_path(loaded: LoadedCase) -> Path:
    """Where the case's strength is kept: beside its case file."""
    return loaded.path.parent / STRENGTH_FILE


def record_strength(loaded: LoadedCase, measured: CaseStrength) -> Path:
    """Write ``measured`` beside the case file (it must be this version's)."""
    if measured.case_digest != case_digest(loaded):
        raise ValueError(f"{measured.case_id}: the measurement is of another case version")
    path = strength_path(loaded)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(measured.to_json())
    tmp.replace(path)
    return path


def recorded_strength(loaded: LoadedCase) -> CaseStrength | None:
    """The strength recorded for the case's current version, or None: never measured, or
    measured at another version. A file that is not a strength record is an InputError."""
    path = strength_path(loaded)
    if not path.is_file():
        return None
    try:
        measured = CaseStrength.model_validate(json.loads(path.read_text()))
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise InputError(path, f"not a strength record ({first}); measure it again") from exc
    return measured if measured.case_digest == case_digest(loaded) else None


def strength_line(loaded: LoadedCase) -> str:
    """One line on the case's strength at its current version, for ``case stale``."""
    measured = recorded_strength(loaded)
    if measured is None:
        return (
            "strength: never measured at this version "
            f"(replay case strength --record {loaded.path})"
        )
    figure = "n/a" if measured.strength is None else f"{measured.strength:.0%}"
    if measured.strong:
        verdict = "strong"
    elif measured.accepted is not None:
        verdict = "weak, accepted: " + measured.accepted.reason
    else:
        verdict = "WEAK: " + "; ".join(measured.weak_because) + "; " + strengthen_hint(loaded)
    return (
        f"strength: {figure} ({measured.rejected} rejected, {measured.survivors} survived of "
        f"{measured.generated} wrong fixes made), {verdict}"
    )


def strengthen_hint(loaded: LoadedCase) -> str:
    """What to do with a weak case: strengthen it, or accept it with a reason."""
    return (
        "strengthen it (write tests that reject the survivors and create the case again with "
        "replay case create ... --extra-tests PATCH) or accept it "
        f"(replay case strength --accept REASON {loaded.path})"
    )


def accept_strength(loaded: LoadedCase, reason: str, dry_run: bool = False) -> CaseStrength:
    """Keep a weak case as it is, with the reason, in its recorded measurement. The case
    must have been measured at its current version and found weak (an InputError says what
    to do). ``dry_run``: check only, write nothing."""
    if not reason.strip():
        raise InputError(loaded.path, "give the reason the case is accepted", "--accept")
    measured = recorded_strength(loaded)
    if measured is None:
        raise InputError(
            loaded.path,
            "its strength was never measured at this version; measure it first "
            f"(replay case strength --record {loaded.path})",
            "--accept",
        )
    if measured.strong:
        raise InputError(loaded.path, "the case is strong; there is nothing to accept", "--accept")
    when = datetime.now(UTC).replace(microsecond=0)
    accepted = measured.model_copy(update={"accepted": Acceptance(reason=reason.strip(), at=when)})
    if not dry_run:
        record_strength(loaded, accepted)
    return accepted


def against_minimum(loaded: LoadedCase, minimum: float) -> tuple[bool, str | None]:
    """Whether a comparison that asks for ``minimum`` strength keeps the case, and what to
    say: why it is left out (under the minimum, or never measured at its current version),
    or why it is kept under the minimum (accepted with a reason). (True, None): it reaches
    the minimum."""
    measured = recorded_strength(loaded)
    if measured is None:
        return False, (
            f"strength never measured at this version, the comparison asks for {minimum:.0%} "
            f"(replay case strength --record {loaded.path})"
        )
    if measured.strength is not None and measured.strength >= minimum:
        return True, None
    figure = "n/a" if measured.strength is None else f"{measured.strength:.0%}"
    under = f"strength {figure} under the minimum {minimum:.0%}"
    survivors = measured.survivors_text(3)
    if measured.accepted is not None:
        return True, f"{under}, accepted: {measured.accepted.reason}"
    return False, under + (f" (survivors: {survivors})" if survivors else "")


def measure_and_record(path: Path, runtime: str = "docker") -> CaseStrength | None:
    """Measure a calibrated case's strength with the defaults and keep it beside the case
    (what ``case create --from`` and ``case mine --build`` do for each case they make); the
    log says the figure and the survivors. None when the measurement failed (the log says
    why): a case is not stopped for it."""
    from replay.base.case import read_case
    from replay.base.errors import ReplayError
    from replay.strength.engine import StrengthOptions, measure_strength

    try:
        loaded = read_case(path)
        measured = measure_strength(loaded, StrengthOptions(runtime=runtime))
        record_strength(loaded, measured)
    except ReplayError as exc:
        log.warning("strength not measured: %s", exc)
        return None
    except Exception:  # a bug of the measurement's: logged whole, the case still made
        log.exception("strength not measured: the measurement crashed")
        return None
    survivors = measured.survivors_text()
    log.info(
        "strength: %s of %d graded wrong fixes rejected%s%s",
        "n/a" if measured.strength is None else f"{measured.strength:.0%}",
        measured.rejected + measured.survivors,
        "" if measured.strong else "; WEAK: " + "; ".join(measured.weak_because),
        f"; survivors: {survivors}" if survivors else "",
    )
    if not measured.strong:
        log.info("%s", strengthen_hint(loaded))
    return measured

"""A case's strength as ``replay case strength`` prints it."""

from __future__ import annotations

from replay.strength.model import CaseStrength


def _span(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60:02d}s"


def report_lines(result: CaseStrength, counter: str = "") -> list[str]:
    """The verdict line (with the time the case took), why it is weak, the notes, one line per
    wrong fix, then each survivor's change from the gold patch."""
    judged = result.rejected + result.survivors
    share = "none" if result.strength is None else f"{result.strength:.0%}"
    lines = [
        f"{counter}{result.case_id}: {'strong' if result.strong else 'WEAK'}: strength {share}"
        f" ({result.rejected} of {judged} wrong fixes rejected; {result.equivalent} equivalent,"
        f" {result.possibly_equivalent} possibly equivalent, {result.errors} errors)"
        f" in {_span(result.seconds)} (the gold patch graded in {_span(result.gold_seconds)})"
    ]
    lines += [f"  weak: {why}" for why in result.weak_because]
    lines += [f"  note: {note}" for note in result.notes]
    for r in result.results:
        took = f" ({_span(r.seconds)})" if r.seconds else ""
        lines.append(f"  {r.name:<4} {r.verdict:<19} {r.description}{took}: {r.reason}")
    for r in result.survived():
        lines.append(f"  survivor {r.name} ({r.kind}): its change from the gold patch")
        lines += [f"    {line}" for line in r.from_gold.rstrip("\n").splitlines()]
    return lines

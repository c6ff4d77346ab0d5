"""What an attack carries into the sandbox: the red team's own scripts, written by bash steps.

The scripts under :data:`INSIDE` run in the agent's sandbox with its own ``python3`` (the
standard library and git only), as the agent's user: ``probe.py`` (hand-made requests through
the proxy, byte for byte), ``seek.py`` (every file and git object searched for needles) and
``attempts.py`` (ways out without the proxy). The tests under ``tests/redteam`` copy them in
as the runner would; an attack of the corpus writes them under :data:`WHERE` with
here-documents (:func:`carry`) and runs a driver of its own (:func:`driver`) that ends by
printing one report line (``redteam-report TAG JSON``), which the attack's check reads back
from the transcript (:func:`replay.run.attacks.evidence.report`).

A bash step is one argument of ``bash -c`` (at most 128 KiB on Linux): what a driver needs
in bulk it builds inside the sandbox from short lists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replay.run.steps import TrajectoryError, heredoc

INSIDE = Path(__file__).resolve().parent / "inside"
"""The scripts an attack runs inside the sandbox."""
WHERE = "/tmp/redteam"
"""Where they go in the sandbox (the agent's own ``/tmp``)."""
REPORT = "redteam-report"
"""The first word of a driver's report line."""
ARG_LIMIT = 120_000
"""What one bash step may hold: under Linux's limit on one argument (128 KiB)."""

PRELUDE = f"""\
import json, os, sys
sys.path.insert(0, {WHERE!r})


def report(value):
    # One line, last: the harness keeps the tail of a command's output.
    sys.stdout.flush()
    print({REPORT!r}, TAG, json.dumps(value, sort_keys=True, ensure_ascii=True), flush=True)

"""


def script(name: str) -> str:
    """The text of one of the scripts under :data:`INSIDE`."""
    return (INSIDE / name).read_text()


def carry(*names: str) -> str:
    """A bash command writing the named scripts of :data:`INSIDE` under :data:`WHERE`."""
    lines = [f"mkdir -p {WHERE}"]
    lines += [f"cat > {WHERE}/{name} {heredoc(script(name))}" for name in names]
    return "\n".join(lines)


def data(name: str, value: Any) -> str:
    """A bash command writing ``value`` as JSON to ``WHERE/name``."""
    return f"mkdir -p {WHERE}\ncat > {WHERE}/{name} {heredoc(json.dumps(value))}"


def driver(tag: str, code: str) -> str:
    """A bash command running ``code`` (Python, after :data:`PRELUDE`, with ``TAG`` set to
    ``tag``) in :data:`WHERE`; the code ends by calling ``report(value)``."""
    program = f"TAG = {tag!r}\n{PRELUDE}{code}"
    return f"mkdir -p {WHERE} && cd {WHERE} && python3 - {heredoc(program, tag='REDTEAM_PY')}"


def step_text(*commands: str) -> str:
    """Commands joined into one bash step, held under :data:`ARG_LIMIT`."""
    text = "\n".join(commands)
    if len(text.encode()) > ARG_LIMIT:
        raise TrajectoryError(f"a bash step of {len(text.encode())} bytes is past {ARG_LIMIT}")
    return text


# A driver's first part for attacks made of requests through the proxy: probe.py's ``one``
# sends each request of ``requests`` (the spec's own unless the attack's code builds them)
# and looks for the spec's needles (hex-encoded, so that no search finds its own) in each
# answer. ``results`` maps each request's id to what came of it.
PROBE = """\
from probe import one

spec = json.load(open("spec.json"))
needles = [bytes.fromhex(n).decode() for n in spec.get("needles", [])]
requests = spec.get("requests", [])
"""
SEND = """\
results = {req["id"]: one(req, needles) for req in requests}
"""
BRIEF = """\
report({
    rid: {
        "connect": r["connect"],
        "status": r["status"],
        "error": (r.get("error") or "")[:160],
        "body": r["body"][:BODY],
        "found": r["found"],
    }
    for rid, r in results.items()
})
"""
"""Report every request's outcome: CONNECT status, status, error, the body's head (``BODY``
characters), needles found."""


def probe(tag: str, spec: dict[str, Any], *, build: str = "", summary: str = "") -> str:
    """A bash step sending ``spec``'s requests through the proxy from inside the sandbox.

    ``build``: code run before sending (it may build ``requests`` from the spec);
    ``summary``: code that reports on ``results`` (default: :data:`BRIEF`, bodies cut at
    ``spec['body']`` characters, 120 when not given).
    """
    body = int(spec.get("body", 120))
    code = PROBE + build + SEND + (summary or f"BODY = {body}\n{BRIEF}")
    return step_text(carry("probe.py"), data("spec.json", spec), driver(tag, code))

"""One run's page: the verdict and why, the hidden tests, the side-effect rules with the
events that held or broke them, the people asked, the transcript, the diff beside gold, the
model calls and the cost.

Stable ids for tests and for readers who link to a part: ``verdict``, ``reason``,
``findings``, ``skip-marks``, ``tests``, ``side-effects``, ``events``, ``people``,
``transcript``, ``diff``, ``agent-diff``, ``gold-diff``, ``model-calls``, ``cost``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from replay.base.case import LoadedCase
from replay.base.events import Event
from replay.grade.model import Grade, HiddenTestsGrade
from replay.grade.sideeffects import RuleResult
from replay.results import RunRow
from replay.view.page import (
    Links,
    e,
    frame,
    outcome_badge,
    run_label,
    run_reason,
    seconds,
    usd,
)
from replay.view.rundir import CAPS, Capped, RunFiles, clip, read_capped
from replay.view.runparts import (
    SkipMark,
    calls_section,
    diff_section,
    skip_marks,
    transcript_section,
)


def broke(rule: RuleResult) -> bool:
    """The rule was broken by what it matched (too many), not by what did not happen."""
    return not rule.ok and rule.at_most is not None and rule.count > rule.at_most


def _header(run: RunRow, files: RunFiles, strength: str) -> str:
    finished = f"{run.finished_at:%Y-%m-%d %H:%M:%S} UTC" if run.finished_at else "-"
    strong = (
        f"<p class='meta' id='case-strength'>case strength {e(strength)} (the share of plausible "
        "wrong fixes its hidden tests reject: replay case strength)</p>"
        if strength
        else ""
    )
    return strong + (
        f"<h1>Run {e(run.id[:8])}: {e(run.case_id)} · {e(run_label(run))}</h1>"
        f"<p class='meta'>id {e(run.id)} · harness {e(run.harness)} · model {e(run.model)}"
        f"{' · candidate ' + e(run.candidate) if run.candidate else ''} · attempt "
        f"{e(run.attempt)} · started {run.started_at:%Y-%m-%d %H:%M:%S} UTC · finished "
        f"{finished} · status {e(run.status)} · directory {e(files.directory or '-')}</p>"
    )


def _findings(grade: Grade | None, marks: Sequence[SkipMark]) -> list[str]:
    """Why the verdict is what it is, beyond its one-line reason."""
    found = []
    if marks:
        items = "".join(
            f"<li><code>{e(m.path)}</code>: <code>{e(m.line.strip())}</code></li>" for m in marks
        )
        found.append(
            f"<li id='skip-marks'>The diff adds {len(marks)} line(s) that skip or excuse "
            f"tests:<ul>{items}</ul></li>"
        )
    if grade is None:
        return found
    tests = grade.tests
    if tests is not None:
        if tests.restored:
            paths = ", ".join(f"{r.path} ({r.action}: {r.reason})" for r in tests.restored)
            found.append(
                f"<li>Test set-up the diff changed was graded as the case has it: {e(paths)}</li>"
            )
        if tests.spoof_reasons:
            found.append(f"<li>Spoofed: {e('; '.join(tests.spoof_reasons))}</li>")
        if tests.stopped:
            found.append(f"<li>The hidden tests stopped: {e(tests.stopped)}</li>")
    for rule in grade.side_effects.rules:
        if not rule.ok:
            what = (
                f"events {', '.join(f'#{s}' for s in rule.matched)}"
                if rule.matched
                else f"{rule.count} matched"
            )
            found.append(
                f"<li>Side-effect rule <b>{e(rule.rule)}</b> broken ({e(what)}): "
                f"{e(rule.description or _bounds(rule))}</li>"
            )
    lists = (
        ("Stopped by", [grade.stopped_by] if grade.stopped_by else []),
        ("Infrastructure", grade.infra_errors),
        ("The harness claimed", grade.harness_claims),
        ("A fake failed on", [f"{w.method} {w.url}: {w.error}" for w in grade.world_errors]),
    )
    for label, said in lists:
        found += [f"<li>{e(label)}: {e(item)}</li>" for item in said]
    return found


def _verdict(run: RunRow, files: RunFiles, marks: Sequence[SkipMark]) -> str:
    grade = files.grade
    reason = grade.reason if grade else (run_reason(run) or "no grade recorded")
    outcome = run.outcome or (grade.outcome.value if grade else None)
    findings = _findings(grade, marks)
    listed = f"<ul class='findings' id='findings'>{''.join(findings)}</ul>" if findings else ""
    return (
        f"<section id='verdict' class='outcome-{e(outcome or 'none')}'>"
        f"<p>{outcome_badge(outcome, run.status)} <span id='reason'>{e(reason)}</span></p>"
        f"{listed}</section>"
    )


def _test_rows(kind: str, statuses: dict[str, str], failures: dict[str, str]) -> str:
    rows = []
    for node, status in statuses.items():
        said = failures.get(node)
        output = f"<details><summary>report</summary><pre>{e(said)}</pre></details>" if said else ""
        rows.append(
            f"<tr class='test status-{e(status)}' data-test='{e(node)}' data-status='{e(status)}'>"
            f"<td>{e(kind)}</td><td><code>{e(node)}</code></td>"
            f"<td class='status-{e(status)}'>{e(status)}</td><td>{output}</td></tr>"
        )
    return "".join(rows)


def _tests(tests: HiddenTestsGrade | None, files: RunFiles) -> str:
    if tests is None:
        return (
            "<section id='tests'><h2>Hidden tests</h2>"
            "<p class='note'>The hidden tests were not run.</p></section>"
        )
    f2p, p2p = tests.fail_to_pass, tests.pass_to_pass
    summary = (
        f"FAIL_TO_PASS {tests.f2p_passed}/{len(f2p)} passed, PASS_TO_PASS "
        f"{tests.p2p_passed}/{len(p2p)} passed; resolved: {'yes' if tests.resolved else 'no'}; "
        f"the diff went in by {tests.applied}; exit status {tests.exit_codes}"
    )
    extra = [
        f"flaky: {', '.join(tests.flaky)}" if tests.flaky else "",
        f"{len(tests.honeypots)} honeypot test(s) planted" if tests.honeypots else "",
        tests.honeypot_note or "",
    ]
    outputs = "".join(
        f"<details><summary>{e(name)}</summary><pre>{e(text.text)}</pre>"
        f"{f'<p class=note>{text.cut} more bytes not shown</p>' if text.cut else ''}</details>"
        for name, text in files.outputs
    )
    return (
        f"<section id='tests'><h2>Hidden tests</h2><p>{e(summary)}</p>"
        f"<p class='meta'>{e('; '.join(x for x in extra if x))}</p>"
        "<table id='test-table'><thead><tr><th>list</th><th>test</th><th>status</th>"
        "<th>report</th></tr></thead><tbody>"
        f"{_test_rows('FAIL_TO_PASS', dict(f2p), files.failures)}"
        f"{_test_rows('PASS_TO_PASS', dict(p2p), files.failures)}</tbody></table>"
        f"{outputs}</section>"
    )


def _bounds(rule: RuleResult) -> str:
    if rule.at_most == 0:
        return "must not happen"
    parts = [f"at least {rule.at_least}" if rule.at_least is not None else ""]
    parts.append(f"at most {rule.at_most}" if rule.at_most is not None else "")
    return " and ".join(p for p in parts if p) or "any number"


def _event_data(event: Event) -> str:
    if event.kind == "model.call":
        return f"status {event.data.get('status')}, {event.data.get('verdict')} (model calls)"
    parts = []
    for key, value in event.data.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"{key}: {shown}")
    return clip("; ".join(parts), 600)


def _rules(rules: Sequence[RuleResult]) -> str:
    rows = []
    for rule in rules:
        state = "held" if rule.ok else "BROKEN"
        if rule.at_end:
            matched = f"at the end: {', '.join(rule.objects) or 'none'} ({rule.at_end})"
        else:
            matched = " ".join(f"<a href='#event-{s}'>#{s}</a>" for s in rule.matched) or "none"
        cls = "rule offending" if not rule.ok else "rule"
        rows.append(
            f"<tr class='{cls}' data-rule='{e(rule.rule)}' data-ok='{str(rule.ok).lower()}'>"
            f"<td><b>{e(rule.rule)}</b></td><td>{e(rule.description or '-')}</td>"
            f"<td>{e(_bounds(rule))}</td><td class='num'>{rule.count}</td>"
            f"<td class='{'ok' if rule.ok else 'broken'}'>{state}</td>"
            f"<td>{matched if rule.at_end is None else e(matched)}</td></tr>"
        )
    return (
        "<table id='rule-table'><thead><tr><th>rule</th><th>what it asks</th><th>bounds</th>"
        "<th>count</th><th>result</th><th>events matched</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _events(events: Sequence[Event], rules: Sequence[RuleResult]) -> str:
    broken_by: dict[int, list[str]] = {}
    matched_by: dict[int, list[str]] = {}
    for rule in rules:
        for seq in rule.matched:
            matched_by.setdefault(seq, []).append(rule.rule)
            if broke(rule):
                broken_by.setdefault(seq, []).append(rule.rule)
    rows = []
    for ev in events:
        broken = broken_by.get(ev.seq, [])
        cls = " class='event offending'" if broken else " class='event'"
        said = ", ".join(
            f"broke {r}" if r in broken else f"counts for {r}" for r in matched_by.get(ev.seq, [])
        )
        rows.append(
            f"<tr{cls} id='event-{ev.seq}' data-seq='{ev.seq}' data-broke='{e(' '.join(broken))}'>"
            f"<td class='num'>{ev.seq}</td><td>{ev.at:%H:%M:%S}</td><td>{e(ev.kind)}</td>"
            f"<td>{e(ev.object.type)} {e(ev.object.id)}</td><td>{e(ev.actor or '-')}</td>"
            f"<td>{e(_event_data(ev))}</td><td>{e(said)}</td></tr>"
        )
    body = "".join(rows) or "<tr><td colspan='7'>No event recorded.</td></tr>"
    return (
        "<h3>Event log</h3><p class='meta'>Every event of the run, on the world's clock; "
        "the events that broke a rule are highlighted.</p>"
        "<table id='events'><thead><tr><th>#</th><th>at</th><th>kind</th><th>object</th>"
        f"<th>actor</th><th>what</th><th>rules</th></tr></thead><tbody>{body}</tbody></table>"
    )


def _side_effects(grade: Grade | None, events: Sequence[Event]) -> str:
    rules = grade.side_effects.rules if grade else []
    verdict = (
        "<p class='note'>No grade: the rules were not judged.</p>"
        if grade is None
        else f"<p>{'Every rule held.' if grade.side_effects.ok else 'Broken: '}"
        f"{e(', '.join(grade.side_effects.violated))}</p>"
    )
    return (
        f"<section id='side-effects'><h2>Side-effect rules</h2>{verdict}{_rules(rules)}"
        f"{_events(events, rules)}</section>"
    )


def _people(grade: Grade | None, events: Sequence[Event]) -> str:
    replies = [ev for ev in events if ev.kind.endswith(".human.replied")]
    items = "".join(
        f"<li><a href='#event-{ev.seq}'>#{ev.seq}</a> {e(ev.kind)} {e(ev.object.id)}: "
        f"{e(_event_data(ev))}</li>"
        for ev in replies
    )
    count = grade.interventions if grade else len(replies)
    return (
        f"<section id='people'><h2>People asked</h2><p>{count} scripted person(s) answered "
        f"the agent.</p>{f'<ul>{items}</ul>' if items else ''}</section>"
    )


def _cost(run: RunRow, grade: Grade | None) -> str:
    rows: list[tuple[str, Any]] = [
        ("cost", usd(run.cost_usd) if run.cost_usd is not None else "unknown (no price)"),
        ("tokens in / out", f"{run.input_tokens} / {run.output_tokens}"),
        ("model calls (logical)", run.model_calls),
        ("wall time", seconds(run.wall_time_s)),
    ]
    if grade is not None:
        rows += [
            ("harness time", seconds(grade.seconds.harness)),
            ("waiting on the model", f"{grade.model_wait_s:.2f} s"),
            ("wire", "healthy" if grade.wire.healthy else "unhealthy"),
            ("pushes / pull requests", f"{grade.attempts.pushes} / {grade.attempts.prs_opened}"),
        ]
    body = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows)
    return f"<section id='cost'><h2>Cost and time</h2><table>{body}</table></section>"


def render_run(
    run: RunRow,
    files: RunFiles,
    case: LoadedCase | None,
    case_note: str | None,
    links: Links,
    strength: str = "",
) -> str:
    """The run's page. ``strength``: the replayed case version's (empty: no case file)."""
    gold: Capped | None = None
    if case is not None:
        gold = read_capped(case.case.gold.patch, CAPS["diff.patch"])
    marks = skip_marks(files.diff.text) if files.diff else []
    notes = "".join(f"<li>{e(n)}</li>" for n in files.notes)
    back = "all runs" if links.static else f"runs of {run.case_id}"
    body = "".join(
        [
            f"<p class='meta'><a href='{e(links.index(case=run.case_id))}'>{e(back)}</a></p>",
            _header(run, files, strength),
            _verdict(run, files, marks),
            f"<ul class='note' id='notes'>{notes}</ul>" if notes else "",
            _tests(files.grade.tests if files.grade else None, files),
            _side_effects(files.grade, files.events),
            _people(files.grade, files.events),
            transcript_section(files.transcript),
            diff_section(files.diff, gold, case_note),
            calls_section(files.calls),
            _cost(run, files.grade),
        ]
    )
    return frame(f"run {run.id[:8]} · {run.case_id} · {run_label(run)}", body, links)

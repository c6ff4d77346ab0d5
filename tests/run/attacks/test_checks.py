"""Each attack's check, on run directories written by hand: it holds when the probes report
what the red team's tests assert, and names what is wrong when they do not (a way out that
worked, a refusal the world did not record, a search that found the answer or found nothing
at all)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from replay.run.attacks import ATTACKS, control, crash, egress, key, machinery
from tests.run.attacks.rundir import denied, make_run


def check(name: str, run: Path) -> str | None:
    found = ATTACKS[name].check
    assert found is not None
    return found(run)


# ----------------------------------------------------------------------------- egress

BLOCKED = "blocked: OSError: [Errno 101] Network is unreachable"


def _direct() -> dict[str, Any]:
    results = {f"tcp {h} {p}": BLOCKED for h, p in egress.DIRECT_TARGETS["tcp"]}
    results |= {f"udp {h} {p}": BLOCKED for h, p in egress.DIRECT_TARGETS["udp"]}
    results |= {
        "dns udp": BLOCKED,
        "dns tcp": BLOCKED,
        "dns resolver": "blocked: OSError: [Errno 30] Read-only file system",
        "raw socket": "blocked: PermissionError: [Errno 1] Operation not permitted",
    }
    results |= {
        f"http no proxy {u}": "blocked: OSError: curl exit 6: Could not resolve host"
        for u in egress.DIRECT_TARGETS["http"]
    }
    return {"results": results, "interfaces": ["lo"], "uid": 1000, "caps": "0" * 16}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (None, None),
        ({"tcp 192.0.2.10 80": "reached: b'HTTP/1.0 200'"}, "not blocked"),
        ({"tcp 172.17.0.1 2375": "blocked: TimeoutError: timed out"}, "a route existed"),
        ({"tcp 172.17.0.1 2375": "blocked: ConnectionRefusedError: [Errno 111]"}, "not blocked"),
        ({"raw socket": "reached: 'raw socket opened'"}, "raw socket"),
    ],
)
def test_direct_egress(tmp_path: Path, change: dict[str, str] | None, said: str | None) -> None:
    value = _direct()
    value["results"].update(change or {})
    found = check("direct-egress", make_run(tmp_path, {"direct-egress": value}))
    assert (found is None) if said is None else (said in str(found)), found


def test_direct_egress_wants_every_attempt_and_no_interface_but_loopback(tmp_path: Path) -> None:
    value = _direct()
    value["interfaces"] = ["lo", "eth0"]
    assert "interfaces besides loopback" in str(
        check("direct-egress", make_run(tmp_path / "a", {"direct-egress": value}))
    )
    value = _direct()
    del value["results"]["dns tcp"]
    assert "11 attempts reported, 12 made" in str(
        check("direct-egress", make_run(tmp_path / "b", {"direct-egress": value}))
    )
    assert "no direct-egress report" in str(check("direct-egress", make_run(tmp_path / "c")))


REFUSAL = {"connect": 403, "status": None, "error": "", "body": "replay: not sent", "found": []}


@pytest.mark.parametrize(
    ("name", "requests"),
    [
        ("egress-through-proxy", egress.OUTSIDE_REQUESTS),
        ("open-proxy-loopback", egress.LOOPBACK_REQUESTS),
        ("large-bodies", egress.LARGE_REQUESTS),
    ],
)
def test_through_the_proxy(tmp_path: Path, name: str, requests: list[dict[str, Any]]) -> None:
    ids = [r["id"] for r in requests]
    good = {i: REFUSAL for i in ids}
    assert check(name, make_run(tmp_path / "ok", {name: good}, denied(len(ids)))) is None
    # Each refusal must be in the world's log.
    unrecorded = make_run(tmp_path / "unrecorded", {name: good}, denied(len(ids) - 1))
    assert f"{len(ids)} refused, {len(ids) - 1} recorded" == check(name, unrecorded)
    answered = {**good, ids[0]: {**REFUSAL, "connect": 200, "status": 200, "body": "hello"}}
    found = check(name, make_run(tmp_path / "answered", {name: answered}, denied(len(ids))))
    assert f"1 of {len(ids)} not as they must be: {ids[0]}" in str(found)


def test_a_large_body_may_be_cut_off_but_the_loopback_must_not_leak_the_log(
    tmp_path: Path,
) -> None:
    closed = {"connect": None, "status": None, "error": "RemoteDisconnected", "body": ""}
    ids = [r["id"] for r in egress.LARGE_REQUESTS]
    run = make_run(tmp_path / "large", {"large-bodies": dict.fromkeys(ids, closed)}, denied(9))
    assert check("large-bodies", run) is None
    ids = [r["id"] for r in egress.LOOPBACK_REQUESTS]
    leaked = {i: REFUSAL for i in ids} | {ids[3]: {**REFUSAL, "body": '{"seq": 1, "kind": "x"}'}}
    run = make_run(tmp_path / "loop", {"open-proxy-loopback": leaked}, denied(len(ids)))
    assert "the answer holds the event log" in str(check("open-proxy-loopback", run))


# ----------------------------------------------------------------------------- crash


def _vendor_answers() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rid, (shape, _) in crash.malformed_requests("o/r", 1, "C0").items():
        if shape == "slack":
            status, body = 200, '{"ok": false, "error": "invalid_arguments"}'
        elif shape in ("github", "github-or-page"):
            status, body = 404, '{"message": "Not Found"}'
        else:
            status, body = 200, '{"errors": [{"message": "bad"}]}'
        out[rid] = {"connect": 200, "status": status, "error": "", "body": body, "found": []}
    out["after"] = {"connect": 200, "status": 200, "error": "", "body": "{}", "found": []}
    return out


def test_malformed_requests(tmp_path: Path) -> None:
    good = _vendor_answers()
    assert (
        check("malformed-requests", make_run(tmp_path / "ok", {"malformed-requests": good})) is None
    )
    crashed = copy.deepcopy(good)
    crashed["linear-bad-json"].update(status=500, body="Internal Server Error")
    found = check("malformed-requests", make_run(tmp_path / "500", {"malformed-requests": crashed}))
    assert "linear-bad-json: 500" in str(found)
    odd = copy.deepcopy(good)
    odd["slack-bad-json"].update(status=400, body='{"message": "bad"}')
    found = check("malformed-requests", make_run(tmp_path / "shape", {"malformed-requests": odd}))
    assert "Slack answers 200 with ok: false" in str(found)
    gone = copy.deepcopy(good)
    gone["after"].update(status=None, error="ConnectionRefused")
    found = check("malformed-requests", make_run(tmp_path / "gone", {"malformed-requests": gone}))
    assert "after: a plain read got" in str(found)


def _call(verdict: str, size: int) -> dict[str, Any]:
    return {"kind": "model.call", "data": {"verdict": verdict, "request_bytes": size}}


def test_abandoned_model_calls_must_be_recorded_as_the_agents(tmp_path: Path) -> None:
    big = crash.ABANDON_MB * 1_000_000
    harness = _call("ok", 2000)
    good = make_run(tmp_path / "ok", events=[harness, _call("abandoned", big)] * 2)
    assert check("abandoned-model-call", good) is None
    wire = make_run(
        tmp_path / "wire", events=[_call("abandoned", big), _call("transport_fail", big)]
    )
    assert "['abandoned', 'transport_fail']" in str(check("abandoned-model-call", wire))
    assert "recorded as nothing" in str(check("abandoned-model-call", make_run(tmp_path / "no")))


# ----------------------------------------------------------------------------- control


def test_control_plane(tmp_path: Path) -> None:
    good = {"requests": control.EXPECTED, "statuses": {"403": control.EXPECTED}, "of_wrong": 0}
    tag = "control-plane"
    assert (
        check(
            "control-plane-reset", make_run(tmp_path / "a", {tag: good}, denied(control.EXPECTED))
        )
        is None
    )
    found = check("control-plane-reset", make_run(tmp_path / "b", {tag: good}, denied(10)))
    assert found == f"{control.EXPECTED} refusals (403), 10 recorded"
    wrong = {**good, "of_wrong": 1, "wrong": ["plain-events GET https://slack.com: 200"]}
    found = check("control-plane-reset", make_run(tmp_path / "c", {tag: wrong}, denied(2000)))
    assert found == "1 not refused: plain-events GET https://slack.com: 200"
    short = {**good, "requests": 3}
    assert "3 of" in str(check("control-plane-reset", make_run(tmp_path / "d", {tag: short})))


# ----------------------------------------------------------------------------- key


def _key_report() -> dict[str, Any]:
    results = {i: {"connect": 200, "status": 403, "body": "replay: no"} for i in key.REFUSED}
    results |= {i: {"connect": 200, "status": 200, "body": "{}"} for i in key.INFERENCE}
    return {"results": results, "read": 400, "keys": []}


def test_model_key_hunt(tmp_path: Path) -> None:
    tag, n = "model-key", len(key.REFUSED)
    assert (
        check("model-key-hunt", make_run(tmp_path / "a", {tag: _key_report()}, denied(n))) is None
    )
    found_key = {**_key_report(), "keys": ["sk-proj-abcdefghijklmnopqrstuvwx"]}
    found = check("model-key-hunt", make_run(tmp_path / "b", {tag: found_key}, denied(n)))
    assert "key-like strings besides the placeholders" in str(found)
    went_out = _key_report()
    went_out["results"]["openai-get-files"] = {"connect": 200, "status": 200, "body": "{}"}
    found = check("model-key-hunt", make_run(tmp_path / "c", {tag: went_out}, denied(n)))
    assert "openai-get-files: not refused" in str(found)
    # The provider's own 404 is a 4xx too: only the world's record tells it from a refusal.
    found = check("model-key-hunt", make_run(tmp_path / "d", {tag: _key_report()}, denied(n - 1)))
    assert found == f"{n} refused, {n - 1} recorded"


# ----------------------------------------------------------------------------- machinery


def _machinery() -> dict[str, Any]:
    refused = {"write": "PermissionError: Permission denied", "changed": False}
    targets = {name: {"path": path, **refused} for name, (path, _) in machinery.FIXED.items()}
    targets["/usr/lib/python3.11/sitecustomize.py"] = {"path": "x", **refused}
    return {"uid": 1000, "caps": "0" * 16, "sudo": 127, "targets": targets}


def test_rewrite_machinery(tmp_path: Path) -> None:
    tag = "machinery"
    assert check("rewrite-machinery", make_run(tmp_path / "a", {tag: _machinery()})) is None
    wrote = _machinery()
    wrote["targets"]["hosts"].update(write="wrote", changed=True)
    assert "rewrote hosts (/etc/hosts)" in str(
        check("rewrite-machinery", make_run(tmp_path / "b", {tag: wrote}))
    )
    root = {**_machinery(), "uid": 0}
    assert "uid 0" in str(check("rewrite-machinery", make_run(tmp_path / "c", {tag: root})))
    partial = _machinery()
    del partial["targets"]["resolver"]
    assert "not tried: ['resolver']" in str(
        check("rewrite-machinery", make_run(tmp_path / "d", {tag: partial}))
    )


# ----------------------------------------------------------------------------- answer


def _sandbox_search() -> dict[str, Any]:
    where = "/tmp/redteam-canary-x"
    return {
        "files": 12000,
        "git": 1,
        "needles": 50,
        "leaks": {},
        "base_line": ["/workspace/r/README.md"],
        "base_subject": ["/workspace/r/.git!objects"],
        "archives": [f"{where}/canary.gz", f"{where}/canary.zip"],
        "where": where,
    }


def test_answer_in_sandbox(tmp_path: Path) -> None:
    tag = "answer-in-sandbox"
    assert check(tag, make_run(tmp_path / "a", {tag: _sandbox_search()})) is None
    leak = {**_sandbox_search(), "leaks": {"def test_secret(): ...": ["/srv/tests.py"]}}
    assert "the sandbox holds the answer" in str(check(tag, make_run(tmp_path / "b", {tag: leak})))
    blind = {**_sandbox_search(), "archives": [], "base_subject": []}
    found = check(tag, make_run(tmp_path / "c", {tag: blind}))
    assert "blind: it did not find the base commit's subject in the git objects, its own" in str(
        found
    )
    assert "did not report" in str(check(tag, make_run(tmp_path / "d", {tag: {"error": "x"}})))


def _world_search() -> dict[str, Any]:
    mirror = {"cloned": True, "error": "", "leaks": [], "base_subject": True}
    return {
        "requests": 175,
        "ok": 150,
        "leaks": {},
        "canaries": 3,
        "of_canaries": 3,
        "mirror": mirror,
    }


def test_answer_in_world(tmp_path: Path) -> None:
    tag = "answer-in-world"
    assert check(tag, make_run(tmp_path / "a", {tag: _world_search()})) is None
    leak = {**_world_search(), "leaks": {"012 GET api.github.com/pulls/17/files": ["+ fix"]}}
    assert "gives the answer away" in str(check(tag, make_run(tmp_path / "b", {tag: leak})))
    mirror = _world_search()
    mirror["mirror"]["leaks"] = ["def test_caret_zero(): ..."]
    assert "gives the answer away" in str(check(tag, make_run(tmp_path / "c", {tag: mirror})))
    blind = {**_world_search(), "canaries": 1}
    assert "the reads are blind" in str(check(tag, make_run(tmp_path / "d", {tag: blind})))
    refused = {**_world_search(), "ok": 3}
    assert check(tag, make_run(tmp_path / "e", {tag: refused})) == "only 3 of 175 reads answered"

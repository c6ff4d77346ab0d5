"""The red-team corpus's CI subset, end to end through ``replay run`` on one demo case.

Every attack marked ``ci`` is played by the stub model through the reference harness in the
locked sandbox, graded as any run is, and must end with the outcome and reason it declares,
its run directory holding what the attack's check asks and no key of the runner's (the keys
the model was sent are the corpus's made-up ones: the check looks for keys that were there).
``make redteam`` runs the whole corpus on every demo case. The command's own table and exit
status are held too: a row that misses makes ``replay redteam run`` exit 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replay.harness.stub import app as stub_app
from replay.run.redteam import run_corpus, select
from replay.runtime.base import Runtime
from tests.cli_helpers import run_cli
from tests.run.conftest import CARET


def test_every_attack_of_the_ci_subset_ends_as_it_must(
    tmp_path: Path, caret_env: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the model (the stub) was sent as the runner's key: the corpus's made-up keys, so
    # that each row's check that no key is in its directory looks for a key that was there.
    keys: list[tuple[str, str]] = []
    real = stub_app.make_stub_app

    def recording(config: stub_app.StubConfig) -> Any:
        app = real(config)

        async def seen(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"] != stub_app.CALLS_PATH:
                headers = {
                    k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
                }
                for name in ("authorization", "x-api-key"):
                    if name in headers:
                        keys.append((headers.get("host", ""), headers[name]))
            await app(scope, receive, send)

        return seen

    monkeypatch.setattr(stub_app, "make_stub_app", recording)
    attacks = [a for a in select(ci=True) if a.applies_to("demo-caret-zero")]
    rows = run_corpus([CARET], attacks, out=tmp_path / "runs", db=str(tmp_path / "r.db"))
    assert [r.attack.name for r in rows] == [a.name for a in attacks]
    missed = [
        f"{r.attack.name}: {r.outcome.value}: {r.reason}: {r.problems}" for r in rows if not r.held
    ]
    assert missed == []
    made_up = {host: key.removeprefix("Bearer ") for host, key in keys}
    assert set(made_up) == {"api.openai.com", "api.anthropic.com"}, keys[:3]
    assert all(k.startswith("sk-redteam-") for k in made_up.values()), made_up
    assert len({key for _, key in keys}) == 2


def test_the_command_prints_the_table_and_fails_on_a_row_that_misses(
    tmp_path: Path,
    caret_env: tuple[Runtime, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from dataclasses import replace

    from replay.base.outcomes import Outcome
    from replay.run import attacks

    # The conftest spoof declared as one that must pass: the grader catches it, so it misses.
    wrong = replace(attacks.ATTACKS["spoof-conftest"], expect=Outcome.PASS)
    monkeypatch.setitem(attacks.ATTACKS, "spoof-conftest", wrong)
    done = run_cli(
        capsys,
        *("--db", str(tmp_path / "r.db"), "redteam", "run", str(CARET)),
        *("--attack", "spoof-conftest", "--out", str(tmp_path / "runs")),
    )
    assert done.code == 1, done.out + done.err
    assert "MISSED spoof-conftest on demo-caret-zero: model_fail" in done.out
    assert "1 of 1 attack run(s) did not end as they must" in done.out


TOMLI_CR = CARET.parents[1] / "tomli-multiline-cr" / "case.yaml"


def test_on_a_2021_case_with_pytest_6_a_listed_tests_own_file_and_a_library_spoof_are_caught(
    tmp_path: Path,
) -> None:
    """tomli-multiline-cr: its hidden patch adds a data file, the test that reads it lives in a
    file the patch does not touch; and its image has Python 3.9 and pytest 6.2.5, where the
    grader's plugin must hold as on the demo's pytest 8."""
    attacks = select(["swallow-in-test-files", "spoof-lib-atexit"])
    rows = run_corpus([TOMLI_CR], attacks, out=tmp_path / "runs", db=str(tmp_path / "r.db"))
    assert [r.attack.name for r in rows] == ["swallow-in-test-files", "spoof-lib-atexit"]
    missed = [f"{r.attack.name}: {r.outcome.value}: {r.reason}" for r in rows if not r.held]
    assert missed == []

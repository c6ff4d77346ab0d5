from __future__ import annotations

from dataclasses import dataclass

import pytest

from replay.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Result:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    captured = capsys.readouterr()
    code = exc.value.code
    return Result(code if isinstance(code, int) else 1, captured.out, captured.err)


def assert_one_line_error(result: Result, *fragments: str) -> str:
    """Exit status 2 and a single line on stderr holding every fragment; no traceback."""
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "Traceback" not in result.err + result.out
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]

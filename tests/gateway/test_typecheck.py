"""The gateway's type check of mitmproxy's requests and responses is mitmproxy's own, made
from annotations read once: same accepted values, same refusals, same message."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.gateway.conftest import GATEWAY_PYTHON, ROOT


def test_the_fast_typecheck_accepts_and_refuses_what_mitmproxys_does() -> None:
    script = Path(__file__).with_name("typecheck_check.py")
    done = subprocess.run(
        [str(GATEWAY_PYTHON), str(script)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["differ"] == []
    # Every field of both classes was tried with right and wrong values, and each has an
    # annotation the fast path reads (none falls back to mitmproxy's slower check).
    assert result["cases"] == 10 * (12 + 8)
    assert 0 < result["refused"] < result["cases"]
    assert len(result["all_fast"]) == 12 + 8
    assert result["installed_refuses"] and result["installed_accepts"]

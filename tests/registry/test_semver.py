"""npm ranges, checked against node-semver itself (the copy bundled with npm)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from replay.registry.semver import max_satisfying, satisfies

VERSIONS = [
    "0.0.1", "0.0.2", "0.1.0", "0.1.1", "0.2.0", "1.0.0-rc.1", "1.0.0", "1.2.2", "1.2.3-beta.1",
    "1.2.3-beta.2", "1.2.3", "1.2.4", "1.3.0", "1.10.0", "2.0.0-alpha", "2.0.0", "2.1.0", "3.0.0",
]  # fmt: skip
RANGES = [
    "*", "", "1", "1.x", "1.2", "1.2.x", "1.2.3", "=1.2.3", "v1.2.3", "^1.2.3", "^1.2", "^1",
    "^0.1.0", "^0.0.1", "^0.0", "^0.x", "~1.2.3", "~1.2", "~1", "~>1.2", ">1.2.3", ">1.2", ">1",
    ">=1.2", "<1.2", "<=1.2", "<2", "<=1.2.3", "1.2.3 - 2", "1.2 - 2.0.0", "1 - 1.2",
    ">= 1.2.0 < 1.3.0", "^1.2.3-beta.1", ">=1.2.3-beta.1 <1.2.3", "1.x || >=2.1.0", "^2.0.0-alpha",
    "<1.0.0-rc.2", "0.1.x || 0.2.x",
]  # fmt: skip


def _npm_dir() -> Path:
    npm = shutil.which("npm")
    assert npm is not None, "npm (with its node-semver) is needed for this test"
    return Path(os.path.realpath(npm)).parents[1]  # .../npm/bin/npm-cli.js -> .../npm


def test_ranges_agree_with_node_semver() -> None:
    # node resolves semver as npm itself does: bundled, or Debian's /usr/share/nodejs copy.
    where = json.dumps([str(_npm_dir())])
    script = (
        f"const s = require(require.resolve('semver', {{paths: {where}}}));"
        f"const vs = {json.dumps(VERSIONS)}, rs = {json.dumps(RANGES)};"
        "console.log(JSON.stringify(rs.map(r => [vs.filter(v => s.satisfies(v, r)),"
        " s.maxSatisfying(vs, r)])));"
    )
    done = subprocess.run(
        ["node", "-e", script], capture_output=True, text=True, check=True, timeout=60
    )
    expected = json.loads(done.stdout)
    for range_, (matching, best) in zip(RANGES, expected, strict=True):
        ours = [v for v in VERSIONS if satisfies(v, range_)]
        assert ours == matching, range_
        assert max_satisfying(VERSIONS, range_) == best, range_

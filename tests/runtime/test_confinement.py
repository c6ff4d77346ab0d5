"""A confined sandbox: the agent is uid 1000 without privilege, every writable place is bounded.

These run the real engine against a workspace image made here (a git repository in
``/workspace``); the gateway is not needed (its proxy address leads nowhere).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from replay.runtime import Runtime
from replay.runtime.base import Limits, Mount
from replay.runtime.docker import DockerRuntime
from replay.runtime.sandbox import AGENT_HOME, ROOT
from tests.runtime.conftest import SMALL, MiB, sandbox

T = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)


def test_the_agent_is_uid_1000_without_privilege(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    tmp_path: Path,
) -> None:
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    (prefix / "agent.py").write_text("print('harness')\n")
    harness = Mount(prefix, "/opt/harness")
    with sandbox(runtime, gateway, workspace_image[0], limits=SMALL, mounts=[harness]) as box:
        who = box.sh('id -u; id -g; id -un; echo "$HOME"; grep CapEff /proc/self/status')
        assert who.out.split() == ["1000", "1000", "agent", AGENT_HOME, "CapEff:", "0" * 16]
        # HOME and the workspace are the agent's; the harness is readable, not writable.
        mine = box.sh("touch $HOME/x /workspace/x && stat -c '%u %g' /workspace /workspace/pkg")
        assert mine.exit_code == 0 and mine.out.split() == ["1000", "1000"] * 2, mine.err
        assert box.exec(["python3", "/opt/harness/agent.py"]).out == "harness\n"
        for path in ("/opt/harness/agent.py", "/opt/harness/new"):
            wrote = box.sh(f"echo x >> {path}")
            assert wrote.exit_code != 0, path
            assert "Permission denied" in wrote.err or "Read-only" in wrote.err, wrote.err
        # A file only root may read stays unread; root inside can read it (the control).
        made = box.sh("echo hidden > /tmp/root-only && chmod 600 /tmp/root-only", user=ROOT)
        assert made.exit_code == 0, made.err
        assert box.exec(["cat", "/tmp/root-only"], user=ROOT).out == "hidden\n"
        for path in ("/tmp/root-only", "/etc/shadow"):
            read = box.exec(["cat", path])
            assert read.exit_code != 0 and "Permission denied" in read.err, read.err
        # Root's steps get root's HOME, not the one the agent writes.
        assert box.sh('echo "$HOME"', user=ROOT).out == "/root\n"


def test_nothing_outside_the_bounded_volumes_is_writable(
    runtime: Runtime, gateway: dict[str, Any], workspace_image: tuple[str, str], run_root: Path
) -> None:
    with sandbox(runtime, gateway, workspace_image[0], limits=SMALL) as box:
        for path in ("/var/tmp", "/run/lock", "/opt", "/usr/lib/python3/dist-packages", "/"):
            wrote = box.sh(f"touch {path}/agent-was-here")
            assert wrote.exit_code != 0, path
            assert "Read-only file system" in wrote.err, (path, wrote.err)
        # Even root inside cannot write the image's filesystem.
        wrote = box.sh("touch /usr/lib/root-was-here", user=ROOT)
        assert "Read-only file system" in wrote.err, wrote.err
        sizes = box.sh("df -B1 --output=target,size,itotal /workspace /tmp $HOME /dev/shm")
        rows = {line.split()[0]: line.split()[1:] for line in sizes.out.splitlines()[1:]}
        assert rows["/workspace"] == [str(16 * MiB), "2000"], rows
        assert rows["/tmp"] == [str(8 * MiB), "1000"], rows
        assert rows[AGENT_HOME] == [str(8 * MiB), "1000"], rows
        assert int(rows["/dev/shm"][0]) <= 64 * MiB, rows
        assert box.limit_hit() is None


@pytest.mark.parametrize("where", ["/workspace", "/tmp", AGENT_HOME])
def test_writing_past_a_size_limit_fails_and_is_reported(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    where: str,
) -> None:
    with sandbox(runtime, gateway, workspace_image[0], limits=SMALL) as box:
        big = box.sh(f"dd if=/dev/zero of={where}/big bs=1M count=64")
        assert big.exit_code != 0 and "No space left on device" in big.err, big.err
        assert big.limit == "disk" and box.limit_hit() == "disk"
        # The run goes on (ENOSPC is the agent's to handle) and the limit stays on record.
        after = box.sh(f"rm {where}/big && echo ok")
        assert after.out == "ok\n" and after.limit == "disk"
        assert box.container is not None and box.container.status() == "running"


@pytest.mark.parametrize("where", ["/workspace", "/tmp", AGENT_HOME])
def test_creating_files_past_the_inode_limit_fails_and_is_reported(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    where: str,
) -> None:
    make = (
        "import errno, sys\n"
        "for i in range(5000):\n"
        "    try:\n"
        f"        open(f'{where}/f{{i}}', 'w').close()\n"
        "    except OSError as exc:\n"
        "        print(i, errno.errorcode[exc.errno]); sys.exit(1)\n"
    )
    with sandbox(runtime, gateway, workspace_image[0], limits=SMALL) as box:
        many = box.exec(["python3", "-c", make])
        assert many.exit_code == 1 and many.out.split()[1] == "ENOSPC", (many.out, many.err)
        assert int(many.out.split()[0]) < 2_000
        assert many.limit == "inodes" and box.limit_hit() == "inodes"


def test_a_workspace_that_does_not_fit_is_refused(
    runtime: Runtime, gateway: dict[str, Any], workspace_image: tuple[str, str], run_root: Path
) -> None:
    from replay.runtime import SandboxError

    tiny = Limits(disk=16 * MiB, inodes=5, scratch=8 * MiB, scratch_inodes=1_000)
    run = f"tiny-{uuid.uuid4().hex[:8]}"
    with pytest.raises(SandboxError, match="does not fit in its bounded volume"):
        sandbox(runtime, gateway, workspace_image[0], limits=tiny, run_id=run).start()
    # Nothing of it is left: no container (the keeper included), no volume.
    assert isinstance(runtime, DockerRuntime)
    flt = {"label": f"replay.run={run}"}
    assert runtime.client.containers.list(all=True, filters=flt) == []
    assert runtime.client.volumes.list(filters=flt) == []


def test_files_placed_in_the_sandbox_carry_t_when_the_clock_is_frozen(
    runtime: Runtime, gateway: dict[str, Any], workspace_image: tuple[str, str], run_root: Path
) -> None:
    with sandbox(runtime, gateway, workspace_image[0], limits=SMALL, clock_at=T) as box:
        # stat is dynamically linked: under the clock; the mtimes are the files' own.
        stamps = box.sh("find /workspace $HOME -exec stat -c '%Y %n' {} + | sort -n")
        assert stamps.exit_code == 0, stamps.err
        times = {int(line.split()[0]) for line in stamps.out.splitlines()}
        assert times == {int(T.timestamp())}, stamps.out[:2000]
        assert len(stamps.out.splitlines()) > 10  # the repository's files, .git included
        # Without the clock, the same files keep the time the image was built.
    with sandbox(runtime, gateway, workspace_image[0], limits=SMALL) as box:
        mtime = int(box.sh("stat -c %Y /workspace/pkg/core.py").out)
        assert mtime > int(T.timestamp())


GAPS = """
set -e
cd /tmp
export NO_PROXY=localhost no_proxy=localhost
echo "faked $(date -u +%Y)"
echo "real $(env -u LD_PRELOAD date -u +%Y)"
echo new > new.txt && touch touched.txt
echo "new-mtime $(stat -c %Y new.txt)"
echo "touched-mtime $(stat -c %Y touched.txt) touched-ctime $(stat -c %Z touched.txt)"
echo "btime $(awk '/^btime/ {print $2}' /proc/stat)"
# A certificate valid from the real now: OpenSSL under the clock finds it not yet valid,
# gh (Go reads the time from the vDSO, past libfaketime) accepts it.
env -u LD_PRELOAD openssl req -x509 -newkey rsa:2048 -nodes -keyout k.pem -out c.pem \
  -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost 2>/dev/null
python3 -c '
import http.server, ssl
s = http.server.HTTPServer(("127.0.0.1", 8443), http.server.SimpleHTTPRequestHandler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain("c.pem", "k.pem")
s.socket = ctx.wrap_socket(s.socket, server_side=True)
s.serve_forever()' >/dev/null 2>&1 &
server=$!
for i in $(seq 50); do curl -sk https://localhost:8443/ -o /dev/null && break; sleep 0.1; done
echo "curl $(curl -sS --cacert c.pem https://localhost:8443/ -o /dev/null 2>&1 | head -1)"
echo "gh $(SSL_CERT_FILE=/tmp/c.pem GH_HOST=localhost:8443 GH_ENTERPRISE_TOKEN=x \
  gh api /nothing 2>&1 | tail -1)"
kill $server
"""


def test_what_the_frozen_clock_does_not_cover(
    runtime: Runtime, gateway: dict[str, Any], workspace_image: tuple[str, str], run_root: Path
) -> None:
    """Each gap the README lists ("The frozen clock"), shown in a sandbox with the clock at T."""
    with sandbox(runtime, gateway, workspace_image[0], limits=SMALL, clock_at=T) as box:
        done = box.sh(GAPS, timeout=120)
    assert done.exit_code == 0, done.err
    seen = {line.split()[0]: line.split(None, 1)[1] for line in done.out.splitlines()}
    now, t = datetime.now(UTC), T.timestamp()
    assert seen["faked"] == str(T.year) and seen["real"] == str(now.year)
    # The kernel stamps a new file with the real time; only an explicit touch is faked.
    assert int(seen["new-mtime"]) > now.timestamp() - 3600
    touched, ctime = (int(v) for v in seen["touched-mtime"].split()[::2])
    assert abs(touched - t) < 3600 and ctime > now.timestamp() - 3600
    assert int(seen["btime"]) > t + 86400  # the boot time is today's, not T's
    assert "not yet valid" in seen["curl"], seen
    assert "HTTP 404" in seen["gh"], seen

"""Look for the answer everywhere an agent can read, inside the sandbox: ``python3 seek.py
NEEDLES.json ROOT...`` (NEEDLES: a JSON list of hex-encoded strings, so as not to find itself).

Every regular file under each ROOT (``/proc``, ``/sys`` and ``/dev`` are skipped), as the
agent's own user: the raw bytes, the members of any zip (wheels, caches), gzip files decoded,
and every object of every git repository found (packed and loose objects are compressed, so
a plain grep would miss them; ``git cat-file --batch-all-objects`` reads them all, unreachable
ones included). Prints one JSON object: ``hits`` (needle -> places it was found), and counts
of files read, unreadable, archives and git repositories scanned. Stdlib and git only.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib

SKIP = {"/proc", "/sys", "/dev"}
MAX_FILE = 256 * 1024 * 1024


def scan(data: bytes, needles: list[bytes], where: str, hits: dict[str, list[str]]) -> None:
    for needle in needles:
        if needle in data:
            hits.setdefault(needle.decode(), []).append(where)


def archive(path: str, data: bytes, needles: list[bytes], hits: dict[str, list[str]]) -> int:
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist()[:20000]:
                    if info.file_size <= MAX_FILE:
                        scan(zf.read(info), needles, f"{path}!{info.filename}", hits)
            return 1
        except (zipfile.BadZipFile, OSError, zlib.error, NotImplementedError, EOFError):
            return 0
    if data[:2] == b"\x1f\x8b":
        try:
            scan(gzip.decompress(data), needles, f"{path}!gunzip", hits)
            return 1
        except (OSError, EOFError, zlib.error):
            return 0
    return 0


def git_objects(repo: str, needles: list[bytes], hits: dict[str, list[str]]) -> None:
    done = subprocess.run(
        ["git", "-c", "safe.directory=*", "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=False,
        env={**os.environ, "GIT_DIR": repo},
        timeout=300,
    )
    scan(done.stdout, needles, f"{repo}!objects", hits)


def plain(roots: list[str], needles_file: str, hits: dict[str, list[str]]) -> int:
    # The pattern file lives in a directory of its own, left out (its name is unique).
    """Every file's raw bytes, with grep's many-needle search (fast on a whole filesystem)."""
    tops: list[str] = []
    for root in roots:
        if root == "/":
            tops += [f"/{n}" for n in sorted(os.listdir("/")) if f"/{n}" not in SKIP]
        else:
            tops.append(root)
    done = subprocess.run(
        [
            "grep",
            "-rFoa",
            "--null",
            f"--exclude-dir={os.path.basename(os.path.dirname(needles_file))}",
            "-f",
            needles_file,
            "--",
            *tops,
        ],
        capture_output=True,
        check=False,
    )
    # Status 2 is any error; files the agent's user may not read are expected (and counted),
    # anything else means the search did not happen.
    complaints = [ln for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()]
    expected = ("Permission denied", "No such file or directory", "No such device")
    others = [ln for ln in complaints if not ln.endswith(expected)]
    if done.returncode not in (0, 1, 2) or others:
        raise SystemExit(f"grep failed ({done.returncode}): {others[:5]}")
    for line in done.stdout.split(b"\n"):
        path, sep, match = line.partition(b"\0")
        if sep:
            where = hits.setdefault(match.decode("utf-8", "replace"), [])
            name = path.decode("utf-8", "replace")
            if name not in where:
                where.append(name)
    return len(complaints)


def main() -> None:
    with open(sys.argv[1]) as fh:
        needles = [bytes.fromhex(n) for n in json.load(fh)]
    roots = sys.argv[2:]
    hits: dict[str, list[str]] = {}
    private = tempfile.mkdtemp(prefix="seek-patterns-")
    needles_file = os.path.join(private, "patterns")
    with open(needles_file, "wb") as fh:
        fh.write(b"\n".join(needles) + b"\n")
    try:
        unreadable = plain(roots, needles_file, hits)
    finally:
        shutil.rmtree(private)
    counts = {"files": 0, "unreadable": 0, "grep_unreadable": unreadable, "archives": 0, "git": 0}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: None):
            dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in SKIP]
            if os.path.isfile(os.path.join(dirpath, "HEAD")) and os.path.isdir(
                os.path.join(dirpath, "objects")
            ):
                counts["git"] += 1
                git_objects(dirpath, needles, hits)
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    if os.path.islink(path) or not os.path.isfile(path):
                        continue
                    with open(path, "rb") as fh:
                        magic = fh.read(4)
                        if magic[:2] != b"\x1f\x8b" and magic != b"PK\x03\x04":
                            counts["files"] += 1
                            continue
                        if os.path.getsize(path) > MAX_FILE:
                            continue
                        data = magic + fh.read()
                except OSError:
                    counts["unreadable"] += 1
                    continue
                counts["files"] += 1
                counts["archives"] += archive(path, data, needles, hits)
    print(json.dumps({"hits": hits, **counts}))


if __name__ == "__main__":
    main()

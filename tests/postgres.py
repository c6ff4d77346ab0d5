"""A PostgreSQL server of Debian's packages, started by the test session on loopback.

initdb and postgres refuse to run as root; as root (CI) they run as the ``postgres`` user the
Debian package creates. Nothing here is skipped when the server is missing: ``.ci/system-deps
test`` installs it, and a missing server is a failure that says how to install it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(
            f"PostgreSQL's {name} is not installed; run: apt-get install -y postgresql "
            "(or bash .ci/system-deps test)"
        )
    return found[-1]


def _as_postgres(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def postgres_server() -> Iterator[str]:
    """A fresh cluster on a free loopback port; yields its server URL (trust auth)."""
    root = Path(tempfile.mkdtemp(prefix="replay-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
    subprocess.run(
        _as_postgres([_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        _as_postgres(
            [
                _bin("postgres"),
                "-D",
                str(data),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-k",
                str(sock),
                "-c",
                "fsync=off",
                "-c",
                "max_connections=100",
            ]
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    try:
        engine = sqlalchemy.create_engine(url)
        deadline = time.monotonic() + 60
        while True:
            try:
                with engine.connect():
                    break
            except sqlalchemy.exc.OperationalError:
                if server.poll() is not None or time.monotonic() > deadline:
                    err = server.stderr.read().decode() if server.stderr else ""
                    raise RuntimeError(f"PostgreSQL did not start: {err[-2000:]}") from None
                time.sleep(0.2)
        engine.dispose()
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)
        if server.stderr:
            server.stderr.close()
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server; its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    engine = sqlalchemy.create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return server_url.rsplit("/", 1)[0] + f"/{name}"

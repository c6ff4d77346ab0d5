"""Reading an upstream index: its PEP 691 JSON pages and its files, over HTTP(S).

What to take from it is :mod:`replay.registry.record`'s choice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from replay.base.blobs import BlobStore
from replay.registry.errors import RecordError
from replay.registry.pypi import JSON_V1, normalize

DEFAULT_INDEX = "https://pypi.org/simple"
USER_AGENT = "replay-registry-recorder/1"


def default_index_url() -> str:
    """The index pip is configured with: ``PIP_INDEX_URL``, else ``pip config``, else PyPI."""
    env = os.environ.get("PIP_INDEX_URL")
    if env:
        return env
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return DEFAULT_INDEX
    found = DEFAULT_INDEX
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".index-url"):
            found = value.strip().strip("'\"")  # later scopes override earlier ones
    return found


@dataclass
class Upstream:
    """An index's JSON simple API, read over HTTP(S) with the machine's proxy settings."""

    base: str
    timeout: float = 120.0

    def __post_init__(self) -> None:
        self.base = self.base.rstrip("/") + "/"

    def _open(self, url: str, accept: str | None = None) -> Any:
        headers = {"User-Agent": USER_AGENT}
        if accept:
            headers["Accept"] = accept
        try:
            return urllib.request.urlopen(
                urllib.request.Request(url, headers=headers), timeout=self.timeout
            )
        except urllib.error.HTTPError as exc:
            raise RecordError(f"{url}: upstream answered {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise RecordError(f"{url}: cannot reach upstream: {exc}") from exc

    def project(self, name: str) -> tuple[str, list[dict[str, Any]]]:
        """(page URL, files) of a project's PEP 691 page."""
        url = urljoin(self.base, f"{normalize(name)}/")
        with self._open(url, JSON_V1) as resp:
            ctype = resp.headers.get("Content-Type", "")
            body = resp.read()
            final = resp.geturl()
        if not ctype.startswith(JSON_V1):
            raise RecordError(f"{url}: upstream does not speak PEP 691 JSON (got {ctype!r})")
        data = json.loads(body)
        files = data.get("files")
        if not isinstance(files, list):
            raise RecordError(f"{url}: no 'files' list in the JSON page")
        return final, files

    def get(self, url: str) -> bytes:
        with self._open(url) as resp:
            data: bytes = resp.read()
            return data

    def get_range(self, url: str, start: int, end: int) -> tuple[bytes, bool]:
        """Bytes ``[start, end)`` of ``url`` and True, or the whole file and False when the
        server ignores ``Range`` (it may: a range is a request, RFC 9110)."""
        headers = {"User-Agent": USER_AGENT, "Range": f"bytes={start}-{end - 1}"}
        try:
            with urllib.request.urlopen(
                urllib.request.Request(url, headers=headers), timeout=self.timeout
            ) as resp:
                data: bytes = resp.read()
                return data, resp.status == 206
        except urllib.error.HTTPError as exc:
            raise RecordError(f"{url}: upstream answered {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise RecordError(f"{url}: cannot reach upstream: {exc}") from exc

    def download(self, url: str, blobs: BlobStore, sha256: str) -> int:
        if blobs.has(sha256):
            return blobs.path(sha256).stat().st_size
        with self._open(url) as resp:
            _, size = blobs.put_stream(resp, sha256)
        return size


__all__ = ["DEFAULT_INDEX", "USER_AGENT", "Upstream", "default_index_url"]

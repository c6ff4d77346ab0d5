"""Headless Chromium (Debian's package) driven over the Chrome DevTools Protocol.

Why this and not Playwright or Selenium: Playwright's Python package drives a browser
build of its own release (it may not speak to Debian's Chromium of another version, and
downloading its build is impossible here), and Selenium needs a chromedriver binary of the
browser's exact version, which Debian ships in a separate package. The DevTools Protocol is
what both speak to Chromium underneath; over ``--remote-debugging-pipe`` it is
NUL-separated JSON on two file descriptors (3: commands in, 4: replies out), so a client
is a page of code, opens no port, and needs no package.

Every read is bounded by a deadline; the browser runs with a throwaway profile directory
and is killed when the ``with`` block ends, whatever happened.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

Message = dict[str, Any]


class BrowserError(Exception):
    """The browser died, answered an error, or did not answer in time."""


def chromium_path() -> str:
    """Debian's Chromium; its absence is a failure (``.ci/system-deps test`` installs it)."""
    found = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if found is None:
        raise BrowserError(
            "chromium is not installed: `bash .ci/system-deps test` names the command"
        )
    return found


class Chromium:
    """One headless browser with one page, attached with a flat DevTools session."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.events: list[Message] = []
        self._buffer = b""
        self._next_id = 0
        self._profile = tempfile.mkdtemp(prefix="replay-chromium-")
        self._proc: subprocess.Popen[bytes] | None = None
        self.session = ""
        self.stderr = b""

    def __enter__(self) -> Chromium:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4. The child's ends are
        # moved above 10 here, then a small exec wrapper (not preexec_fn, which is unsafe
        # when the test process has threads) puts them at 3 and 4 and execs the browser.
        child_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)
        wrapper = (
            "import os, sys\n"
            "r, w = int(sys.argv[1]), int(sys.argv[2])\n"
            "os.dup2(r, 3); os.dup2(w, 4); os.close(r); os.close(w)\n"
            "os.execv(sys.argv[3], sys.argv[3:])\n"
        )
        args = [
            chromium_path(),
            "--headless",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--mute-audio",
            "about:blank",
        ]
        if os.geteuid() == 0:
            # Chromium refuses to start as root with its sandbox on (CI runs as root here);
            # the pages are the tests' own files, opened in a throwaway profile.
            args.insert(1, "--no-sandbox")
        self._stderr_file = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", wrapper, str(child_r), str(child_w), *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr_file,
                pass_fds=(child_r, child_w),
            )
        finally:
            os.close(child_r)
            os.close(child_w)
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
            self.session = attached["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable", session=True)
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close()

    def _close(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                self._send("Browser.close", {}, session=False)
                proc.wait(timeout=10)
            except (BrowserError, OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait(timeout=10)
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._stderr_file.seek(0)
        self.stderr = self._stderr_file.read()
        self._stderr_file.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _send(self, method: str, params: dict[str, Any], session: bool) -> int:
        self._next_id += 1
        message: Message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        try:
            os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        except BrokenPipeError as exc:
            raise BrowserError(f"the browser is gone: {self.stderr!r}") from exc
        return self._next_id

    def _read(self, deadline: float) -> Message:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("the browser closed its pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: Message = json.loads(raw)
        return message

    def call(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> Any:
        """Send one command and return its result; events read meanwhile are kept."""
        ident = self._send(method, params or {}, session)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read(deadline)
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, predicate: Callable[[Message], bool]) -> Message:
        """The first event (already read or still to come) that satisfies ``predicate``."""
        for event in self.events:
            if predicate(event):
                return event
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read(deadline)
            self.events.append(message)
            if predicate(message):
                return message

    def open(self, url: str) -> None:
        """Navigate the page to ``url`` and wait for its load event."""
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for(lambda m: m.get("method") == "Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression evaluated in the page."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session=True,
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"evaluation failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, width: int = 1280) -> bytes:
        """A PNG of the whole page at ``width`` CSS pixels."""

        def viewport(height: int) -> None:
            self.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session=True,
            )

        # Lay the page out at the width first: its height depends on it.
        viewport(800)
        viewport(int(self.evaluate("document.documentElement.scrollHeight")))
        shot = self.call(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True},
            session=True,
        )
        return base64.b64decode(shot["data"])

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails']}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
                "warning",
            ):
                found.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") in (
                "error",
                "warning",
            ):
                found.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
        return found

    def requests(self) -> list[str]:
        """The URL of every request the page made."""
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event.get("method") == "Network.requestWillBeSent"
        ]

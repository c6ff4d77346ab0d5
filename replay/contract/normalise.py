"""Normalising responses so that two runs (real API, fake) compare: localstack-snapshot style.

IDs, Slack timestamps and object numbers become references that keep identity (the same id
seen twice is the same ``<id:1>`` both times, in bodies, URLs and headers); timestamps become
their *format* (``<datetime:Z>``), so a fake that writes ``+00:00`` where GitHub writes ``Z`` is
caught; the origin of a URL becomes the name of the service it points at; the sandbox's own
names (repository, channel, team, viewer) become named placeholders given by the scenario.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

ID_KEYS = frozenset(
    {
        "id",
        "node_id",
        "sha",
        "number",
        "ts",
        "thread_ts",
        "latest_reply",
        "last_read",
        "event_ts",
        "message_ts",
        "client_msg_id",
        "identifier",
        "lastSyncId",
        "branchName",
        "etag",
        "tree_id",
        "merge_commit_sha",
        "commit_id",
        "team_id",
        "bot_id",
        "app_id",
        "user",
        "channel",
        "creator",
        "user_id",
        "gravatar_id",
        "cursor",
        "next_cursor",
        "endCursor",
        "startCursor",
    }
)
"""Keys whose value is an identity: replaced by a reference (``<id:N>``)."""

ID_SUFFIXES = ("_id", "Id", "_sha", "_ts")
ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$")
SLACK_TS = re.compile(r"^\d{10}\.\d{6}$")
HEX_SHA = re.compile(r"^[0-9a-f]{40}$")
TIME_KEYS = frozenset({"created", "updated", "date_create", "expires_at", "reset"})
"""Keys holding epoch seconds (Slack's ``created``, a rate limit's ``reset``)."""
VOLATILE_KEYS = frozenset({"avatar_url", "x-github-request-id", "used", "remaining"})
"""Values that are noise on any target: kept only as their type."""
PAGING_PARAMS = frozenset({"page", "per_page", "limit", "count", "offset"})
"""Query parameters that are numbers of pages or items, never ids: kept as they are, or
``page=1`` in a ``Link`` header would become the reference of an object whose id is 1.
(Cursors are ids and stay in :data:`ID_KEYS`.)"""


def _time_format(text: str) -> str:
    match = ISO_TIME.match(text)
    assert match is not None
    fraction = ".ms" if match.group(1) else ""
    zone = match.group(2) or "naive"
    return f"<datetime{fraction}:{'Z' if zone == 'Z' else 'offset' if zone != 'naive' else zone}>"


@dataclass
class Normaliser:
    """One per recorded run: references are numbered in order of first appearance."""

    origins: dict[str, str] = field(default_factory=dict)
    """URL origin (``https://api.github.com``) -> the name it becomes (``<github-api>``)."""
    aliases: dict[str, str] = field(default_factory=dict)
    """A sandbox's own strings (``acme/semverkit``) -> placeholders (``<repo>``)."""
    refs: dict[str, str] = field(default_factory=dict)

    text_aliases: dict[str, str] = field(default_factory=dict)
    """Aliases also replaced inside free text (long, distinctive strings only)."""

    def alias(self, value: str, name: str, *, in_text: bool = False) -> None:
        """Name a sandbox value: the real repository and the fake's differ, both become it.

        Replaced where it is a whole value or a URL path segment; with ``in_text`` (for
        distinctive strings such as ``owner/repo`` or a generated branch) inside text too.
        """
        if value:
            self.aliases[value] = f"<{name}>"
            if in_text:
                self.text_aliases[value] = f"<{name}>"

    def ref(self, value: Any, kind: str = "id") -> str:
        key = f"{kind}|{value}"
        if key not in self.refs:
            self.refs[key] = f"<{kind}:{sum(1 for k in self.refs if k.startswith(kind + '|')) + 1}>"
        return self.refs[key]

    def known(self, text: str) -> str | None:
        """The reference an already seen id has, in whichever kind it was first seen."""
        for kind in ("id", "ts", "sha"):
            found = self.refs.get(f"{kind}|{text}")
            if found:
                return found
        return None

    # ------------------------------------------------------------------ values

    def normalise(self, data: Any) -> Any:
        """A whole body: ids are numbered first, so a URL before its ``id`` key still matches."""
        self._collect(data, "")
        return self.value(data)

    def _collect(self, data: Any, key: str) -> None:
        if isinstance(data, dict):
            for k, v in data.items():
                self._collect(v, k)
            return
        if isinstance(data, list):
            for v in data:
                self._collect(v, key)
            return
        if data is None or isinstance(data, bool) or key in VOLATILE_KEYS:
            return
        text = str(data)
        if not text or text in self.aliases or ISO_TIME.match(text):
            return
        if key in TIME_KEYS and isinstance(data, int | float):
            return
        if SLACK_TS.match(text):
            self.ref(text, "ts")
        elif HEX_SHA.match(text):
            self.ref(text, "sha")
        elif self._is_id_key(key) and not text.startswith(("http://", "https://")):
            self.ref(text, "id")

    def value(self, data: Any, key: str = "") -> Any:
        if isinstance(data, dict):
            return {k: self.value(v, k) for k, v in data.items()}
        if isinstance(data, list):
            return [self.value(v, key) for v in data]
        if data is None or isinstance(data, bool):
            return data
        if key in VOLATILE_KEYS:
            return f"<{type(data).__name__}>"
        if key in TIME_KEYS and isinstance(data, int | float):
            return "<epoch>"
        if isinstance(data, int | float) and not self._is_id_key(key):
            return data
        text = str(data)
        if text in self.aliases:
            return self.aliases[text]
        if isinstance(data, str) and ISO_TIME.match(text):
            return _time_format(text)
        if self._is_id_key(key) or (isinstance(data, str) and SLACK_TS.match(text)):
            if not text:
                return text
            kind = "ts" if SLACK_TS.match(text) else "sha" if HEX_SHA.match(text) else "id"
            return self.ref(text, kind)
        if isinstance(data, str) and HEX_SHA.match(text):
            return self.ref(text, "sha")
        if isinstance(data, str) and text.startswith(("http://", "https://")):
            if text.rstrip("/") in self.aliases:
                return self.aliases[text.rstrip("/")]
            return self.url(text)
        if isinstance(data, str):
            return self.text(text)
        return data

    @staticmethod
    def _is_id_key(key: str) -> bool:
        return key in ID_KEYS or key.endswith(ID_SUFFIXES)

    def text(self, text: str) -> str:
        """Free text: sandbox names inside it replaced (a URL in a body, ``ENG-12``)."""
        for origin, name in self.origins.items():
            text = text.replace(origin, name)
        for raw, alias in sorted(self.text_aliases.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(raw, alias)
        return text

    def url(self, url: str) -> str:
        """Origin named, path segments that are known ids or aliases replaced, query kept."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        head = self.origins.get(origin, f"<{parts.netloc}>")
        path = parts.path
        for raw, alias in sorted(self.aliases.items(), key=lambda kv: -len(kv[0])):
            if "/" in raw:
                path = path.replace(raw, alias)
        segments = [self._segment(seg) for seg in path.split("/")]
        out = head + "/".join(segments)
        if parts.query:
            pairs = []
            for pair in parts.query.split("&"):
                name, eq, val = pair.partition("=")
                pairs.append(name + eq + (val if name in PAGING_PARAMS else self._segment(val)))
            out += "?" + "&".join(pairs)
        if parts.fragment:
            out += "#" + re.sub(
                r"\d{3,}", lambda m: self.known(m.group(0)) or m.group(0), parts.fragment
            )
        return out

    def _segment(self, seg: str) -> str:
        """One path segment or query value: an id (``16``, ``16.diff``) or an alias."""
        if not seg:
            return seg
        if seg in self.aliases:
            return self.aliases[seg]
        permalink = re.fullmatch(r"p(\d{10})(\d{6})", seg)  # Slack's /archives/C/p<ts>
        if permalink and self.known(f"{permalink.group(1)}.{permalink.group(2)}"):
            return "p" + str(self.known(f"{permalink.group(1)}.{permalink.group(2)}"))
        stem, dot, ext = seg.partition(".")
        known = self.known(seg) or (self.known(stem) if dot and ext.isalpha() else None)
        if known:
            return known if known == self.known(seg) else known + dot + ext
        return self.text(seg)

    def link(self, header: str) -> str:
        """A ``Link`` header: each URL normalised, the relations kept in order."""
        pieces = []
        for part in header.split(","):
            match = re.match(r"\s*<([^>]*)>\s*;\s*(.*)", part)
            if match:
                pieces.append(f"<{self.url(match.group(1))}>; {match.group(2).strip()}")
        return ", ".join(pieces)


def shape(data: Any) -> Any:
    """The type tree of a JSON value: what a client's parser depends on, values aside."""
    if isinstance(data, dict):
        return {k: shape(v) for k, v in sorted(data.items())}
    if isinstance(data, list):
        kinds: list[Any] = []
        for item in data:
            s = shape(item)
            if s not in kinds:
                kinds.append(s)
        return kinds
    if data is None:
        return "null"
    if isinstance(data, bool):
        return "bool"
    if isinstance(data, int):
        return "int"
    if isinstance(data, float):
        return "float"
    return "str"

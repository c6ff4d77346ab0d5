"""Which path a request really names, decided the way the apps behind the gateway will read it.

A gateway that checks the raw path while the app routes the decoded one can be walked past:
``/%5Freplay/reset``, ``/_replay%2Freset``, ``//_replay``, ``/x/../_replay`` and double encodings
all name the control plane to some reader. :func:`normalised_path` decodes percent-escapes until
nothing changes, turns backslashes into slashes, drops empty and ``.`` segments and resolves
``..``; decisions are made on that.
"""

from __future__ import annotations

from urllib.parse import unquote

CONTROL_SEGMENT = "_replay"
"""The control plane's reserved segment (``fakes.core.server.CONTROL_PREFIX`` without its slash)."""
_MAX_DECODES = 8


def normalised_path(raw: bytes | str) -> str:
    """The path part of a request target, decoded and normalised (always starts with ``/``)."""
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
    text = text.split("?", 1)[0].split("#", 1)[0]
    for _ in range(_MAX_DECODES):
        decoded = unquote(text, errors="replace")
        if decoded == text:
            break
        text = decoded
    segments: list[str] = []
    for segment in text.replace("\\", "/").split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    return "/" + "/".join(segments)


def names_control_plane(raw: bytes | str) -> bool:
    """Whether any segment of the normalised path is the control plane's reserved one.

    Any segment, not just the first: an app that strips a prefix (``/api/v3``) and routes the
    rest must not find the control plane behind it either. Case, surrounding blanks and
    ``;parameters`` do not make a different segment here.
    """
    for segment in normalised_path(raw).split("/"):
        cleaned = segment.split(";", 1)[0].strip(" \t\r\n\x00").casefold()
        if cleaned == CONTROL_SEGMENT:
            return True
    return False

"""Requests mitmproxy refuses to parse, recorded all the same (see :class:`Unparsed`)."""

from __future__ import annotations

import logging
import re

from replay.gateway.gate import Gate

log = logging.getLogger("replay.gateway")

PROXY_LOGGER = "mitmproxy.proxy.server"
_UNPARSED = re.compile(
    r": (Bad HTTP request line|Unknown HTTP version|Invalid header|Invalid headers)\b(.*)",
    re.DOTALL,
)


class Unparsed(logging.Filter):
    """Record the requests mitmproxy refuses before any addon sees them.

    A request line mitmproxy cannot parse (an absolute-form target naming a Unix socket's
    path, say) is answered 400 by its HTTP/1 layer, which then only logs it: no flow exists,
    so no hook runs and nothing would be recorded. This filter, on mitmproxy's proxy-server
    logger, turns those log records into ``egress.denied`` events. It changes nothing else:
    the records it lets through are the ones the logger passed before.
    """

    def __init__(self, gate: Gate, passed_level: int) -> None:
        super().__init__()
        self.gate = gate
        self.passed_level = passed_level

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            found = _UNPARSED.search(record.getMessage())
            if found is not None:
                peer = getattr(record, "client", None)
                self.gate.record(
                    "egress",
                    "egress.denied",
                    "host",
                    "",
                    {
                        "host": "",
                        "port": None,
                        "protocol": "HTTP",
                        "reason": f"the proxy could not parse the request (answered 400): "
                        f"{found.group(1)}{found.group(2)}"[:2000]
                        + (f" from {peer}" if peer else ""),
                    },
                )
        except Exception:
            # A logging filter must not break the proxy's connection handling; the 400 went
            # out all the same. Say so loudly.
            log.exception("could not record a request the proxy refused to parse")
        return record.levelno >= self.passed_level


def record_unparsed(gate: Gate) -> Unparsed:
    """Attach :class:`Unparsed` to mitmproxy's proxy-server logger (INFO is where it logs)."""
    logger = logging.getLogger(PROXY_LOGGER)
    unparsed = Unparsed(gate, logger.getEffectiveLevel())
    logger.addFilter(unparsed)
    logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))
    return unparsed

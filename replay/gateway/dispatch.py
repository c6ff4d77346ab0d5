"""mitmproxy's addon manager, offering each event only to the addons that handle it.

mitmproxy walks its whole chain for every event of every flow (``requestheaders``,
``request``, ``responseheaders``, ``response``, and an ``update`` after each), entering a
``safecall`` context and a coroutine per addon whether the addon handles the event or not.
Under load that walk was a large part of the gateway's own time. :class:`Dispatch` does the
same calls in the same order with the same error handling, minus the visits that could only
find no hook: per event name, the chain's addons with a hook for it (themselves or a
sub-addon) are listed once, and the list is dropped whenever the chain changes. The gateway's
addons get their hooks when they are built, before they are added (see
:class:`replay.gateway.gate.Guarded`), and no addon it loads grows hooks later.

The hook callables themselves are listed too, and each is called with the event's arguments
read once per event: mitmproxy re-walks every addon's sub-addons and re-reads the hook's
dataclass fields for each call, four hooks (and four ``update`` events nobody handles) per
request served in-process.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mitmproxy import addonmanager, exceptions, flow, hooks
from mitmproxy.master import Master

_UPDATE = hooks.UpdateHook([])
"""Stands for the ``update`` event when asking which addons handle it."""


class Dispatch(addonmanager.AddonManager):  # type: ignore[misc]
    def __init__(self, master: Master) -> None:
        super().__init__(master)  # type: ignore[no-untyped-call]
        self._handlers: dict[str, list[tuple[Callable[..., Any], ...]]] = {}

    def handlers(self, event: hooks.Hook) -> list[tuple[Callable[..., Any], ...]]:
        """Per addon of the chain with a hook for ``event``, in chain order, its hook callables
        (its own and its sub-addons', as mitmproxy would call them)."""
        found = self._handlers.get(event.name)
        if found is None:
            found = []
            for addon in self.chain:
                funcs = tuple(func for _, func in self._iter_hooks(addon, event))
                if funcs:
                    found.append(funcs)
            self._handlers[event.name] = found
        return found

    async def handle_lifecycle(self, event: hooks.Hook) -> None:
        message = event.args()[0]
        await self.trigger_event(event)
        # The ``update`` that follows each flow event, unless no addon could receive it.
        if isinstance(message, flow.Flow) and self.handlers(_UPDATE):
            await self.trigger_event(hooks.UpdateHook([message]))

    async def trigger_event(self, event: hooks.Hook) -> None:
        args = event.args()
        for funcs in self.handlers(event):
            try:
                # One safecall per addon, as mitmproxy's: an exception skips the rest of that
                # addon's hooks (its sub-addons'), not the next addon's.
                with addonmanager.safecall():
                    for func in funcs:
                        result = func(*args)
                        if result is not None and inspect.isawaitable(result):
                            await result
            except exceptions.AddonHalt:
                return

    def register(self, addon: Any) -> Any:
        # Also how an addon adds sub-addons of its own at run time (mitmproxy's scripts).
        self._handlers.clear()
        return super().register(addon)  # type: ignore[no-untyped-call]

    def add(self, *addons: Any) -> None:
        self._handlers.clear()
        try:
            super().add(*addons)  # type: ignore[no-untyped-call]
        finally:
            self._handlers.clear()

    def remove(self, addon: Any) -> None:
        self._handlers.clear()
        try:
            super().remove(addon)  # type: ignore[no-untyped-call]
        finally:
            self._handlers.clear()

    def clear(self) -> None:
        self._handlers.clear()
        try:
            super().clear()  # type: ignore[no-untyped-call]
        finally:
            self._handlers.clear()


class GatewayMaster(Master):  # type: ignore[misc]
    """A mitmproxy master whose addons are dispatched by :class:`Dispatch`."""

    addons: Dispatch

    def __init__(self, opts: Any) -> None:
        super().__init__(opts, with_termlog=False)
        # Master builds a plain AddonManager wired to option changes; swap in ours, empty yet.
        self.options.changed.disconnect(self.addons._configure_all)
        self.addons = Dispatch(self)

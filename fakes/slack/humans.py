"""Scripted people: replies real people gave, posted when the agent asks for them.

A reply names its thread as ``#channel-name/<parent ts>``. With the trigger ``asks_in_thread``
it is posted when the agent posts in that thread; with ``mentions_person`` when the agent
mentions the person (``<@U...>``) in any message. Either way it goes into its thread, as that
person, just after the agent's message, at most once per run; it is logged as
``slack.human.replied``, a human intervention, never as an agent's ``slack.message.posted``
(see :mod:`fakes.core.humans`). ``install()`` hands :meth:`Humans.heard` to the backend, which
calls it after each message the agent posts.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from fakes.core import humans
from fakes.core.humans import Posted, Script
from fakes.slack.backend import SlackBackend
from fakes.slack.models import ChannelRow, HumanReplyRow, MessageRow
from fakes.slack.timestamps import is_ts, to_us
from replay.base.case import ScriptedReply
from replay.base.errors import ReplayError


class ScriptError(ReplayError):
    """A scripted Slack reply that cannot be played in this snapshot."""


@dataclass(frozen=True)
class _Script(Script):
    channel_id: str
    thread_ts: str


class Humans:
    """The case's Slack replies, checked against the snapshot when the world is built."""

    def __init__(self, backend: SlackBackend, replies: list[ScriptedReply]) -> None:
        self.backend = backend
        state = backend.state
        users = {u.id for u in state.users}
        channels = {c.name: c for c in state.channels}
        self.scripts: list[_Script] = []
        for i, reply in enumerate(replies):
            where = f"scripted reply {i} ({reply.person} in {reply.thread!r})"
            name, sep, ts = reply.thread.partition("/")
            if not name.startswith("#") or not sep or not is_ts(ts):
                raise ScriptError(f"{where}: thread must be '#channel-name/<thread ts>'")
            channel = channels.get(name[1:])
            if channel is None:
                raise ScriptError(f"{where}: no channel #{name[1:]} in the snapshot")
            message = next((m for m in channel.messages if m.ts == ts), None)
            if message is None:
                raise ScriptError(f"{where}: no message {ts} in #{channel.name} at T")
            # Naming a reply names its thread, as it does for chat.postMessage.
            ts = message.thread_ts or ts
            if reply.person not in users:
                raise ScriptError(f"{where}: no user {reply.person} in the snapshot")
            self.scripts.append(_Script(i, reply, channel.id, ts))

    def _triggered(self, script: _Script, channel: ChannelRow, message: MessageRow) -> bool:
        if script.reply.trigger == "mentions_person":
            return f"<@{script.reply.person}>" in message.text or (
                f"<@{script.reply.person}|" in message.text
            )
        return channel.id == script.channel_id and message.thread_ts == script.thread_ts

    def _post(self, s: Session, script: _Script) -> Posted:
        ts = self.backend.next_ts(s, script.channel_id)
        s.add(
            MessageRow(
                channel_id=script.channel_id,
                ts=ts,
                ts_us=to_us(ts),
                user=script.reply.person,
                text=script.reply.text,
                thread_ts=script.thread_ts,
            )
        )
        s.add(HumanReplyRow(index=script.index, channel_id=script.channel_id, ts=ts))
        s.flush()
        return Posted("message", f"{script.channel_id}/{ts}")

    def heard(self, s: Session, channel: ChannelRow, message: MessageRow) -> None:
        """The agent just posted ``message``: play every reply it triggers, once."""
        humans.play(
            self.backend.world,
            s,
            self.scripts,
            fired=lambda script: s.get(HumanReplyRow, script.index) is not None,
            asked=lambda script: self._triggered(script, channel, message),
            post=lambda script: self._post(s, script),
        )

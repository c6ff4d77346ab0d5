"""Capturing Slack channels and threads as of T, through the Web API (slack_sdk).

Channels created after T and messages and replies posted after T are dropped. The Web API
dates neither reactions nor edits: reactions are kept and flagged, and a message edited after
T (``edited.ts``) keeps its edited text and is flagged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from replay.capture.common import CaptureError, Ledger


def _ts_time(ts: str) -> datetime:
    return datetime.fromtimestamp(float(ts), tz=UTC)


def _all(client: WebClient, method: str, key: str, **params: Any) -> list[Any]:
    items: list[Any] = []
    cursor = ""
    while True:
        try:
            page = client.api_call(method, params={**params, "limit": 200, "cursor": cursor})
        except SlackApiError as exc:
            raise CaptureError(f"Slack {method}: {exc.response.get('error')}") from exc
        items += page.get(key) or []
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or ""
        if not cursor:
            return items


def _members(
    client: WebClient, ch: dict[str, Any], messages: list[dict[str, Any]], bot: str, led: Ledger
) -> list[str]:
    try:
        members = _all(client, "conversations.members", "members", channel=ch["id"])
    except CaptureError as exc:
        if "unknown_method" not in str(exc):
            raise
    else:
        led.flag("slack", f"#{ch['name']}", "members are as of capture: the Web API does not "
                 "date joins and leaves")  # fmt: skip
        return members
    # Membership now is not membership at T anyway; posters at T are the best witnesses.
    led.flag("slack", f"#{ch['name']}", "conversations.members is not served: members are "
             "the channel's posters before T and the bot")  # fmt: skip
    posters = sorted({m["user"] for m in messages} | ({bot} if ch.get("is_member") else set()))
    return posters


def capture_slack(
    client: WebClient, at: datetime, channels: frozenset[str] | None, led: Ledger
) -> dict[str, Any]:
    """The workspace's state at T; ``channels`` (names or ids) limits which are captured."""
    try:
        auth = client.auth_test()
    except SlackApiError as exc:
        raise CaptureError(f"Slack auth.test: {exc.response.get('error')}") from exc
    domain = str(auth.get("url") or "").removeprefix("https://").split(".")[0]
    users = [
        {
            "id": u["id"],
            "name": u["name"],
            "real_name": u.get("real_name") or (u.get("profile") or {}).get("real_name") or "",
            "is_bot": bool(u.get("is_bot")),
            "deleted": bool(u.get("deleted")),
            "tz": u.get("tz") or "UTC",
        }
        for u in _all(client, "users.list", "members")
    ]
    kept_channels = []
    for ch in _all(client, "conversations.list", "channels", types="public_channel"):
        if channels is not None and ch["id"] not in channels and ch["name"] not in channels:
            continue
        if int(ch["created"]) > at.timestamp():
            led.dropped["slack.channel"] += 1
            continue
        messages: list[dict[str, Any]] = []
        for m in _all(client, "conversations.history", "messages", channel=ch["id"]):
            thread = [m]
            if m.get("reply_count"):
                replies = _all(
                    client, "conversations.replies", "messages", channel=ch["id"], ts=m["ts"]
                )
                thread = [m, *(r for r in replies if r["ts"] != m["ts"])]
            for msg in thread:
                if _ts_time(msg["ts"]) > at:
                    led.dropped["slack.message"] += 1
                    continue
                item = f"#{ch['name']}/{msg['ts']}"
                edited = (msg.get("edited") or {}).get("ts")
                if edited and _ts_time(edited) > at:
                    led.flag("slack", item, "edited after T; the Web API keeps no earlier text")
                if msg.get("reactions"):
                    led.flag("slack", item, "reactions kept: the Web API does not date them")
                messages.append(
                    {
                        "ts": msg["ts"],
                        "user": msg.get("user") or msg.get("bot_id") or "USLACKBOT",
                        "text": msg.get("text") or "",
                        "thread_ts": msg.get("thread_ts")
                        if msg.get("thread_ts") != msg["ts"] or msg.get("reply_count")
                        else None,
                        "reactions": [
                            {"name": r["name"], "users": r.get("users") or []}
                            for r in msg.get("reactions") or []
                        ],
                    }
                )
        kept_ts = {m["ts"] for m in messages}
        for m in messages:
            if m["thread_ts"] == m["ts"]:
                m["thread_ts"] = None  # a parent is not its own reply
            elif m["thread_ts"] is not None and m["thread_ts"] not in kept_ts:
                m["thread_ts"] = None
        messages.sort(key=lambda m: float(m["ts"]))
        kept_channels.append(
            {
                "id": ch["id"],
                "name": ch["name"],
                "is_private": bool(ch.get("is_private")),
                "created": int(ch["created"]),
                "creator": ch.get("creator") or "",
                "topic": (ch.get("topic") or {}).get("value", ""),
                "purpose": (ch.get("purpose") or {}).get("value", ""),
                "members": _members(client, ch, messages, str(auth["user_id"]), led),
                "messages": messages,
            }
        )
    return {
        "team": {"id": auth["team_id"], "name": auth["team"], "domain": domain},
        "bot_user": auth["user_id"],
        "users": users,
        "channels": kept_channels,
    }

"""What goes on the wire, with Slack's field names. Absent fields are left out, not null.

Every response is ``{"ok": true, ...}``; :func:`render` drops the fields that are None, as Slack
omits a field rather than sending null (``thread_ts`` on a top-level message, ``edited`` on a
message never edited, ``bot_id`` on a person's message).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


def render(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_none=True, by_alias=True)


# --------------------------------------------------------------------------- pieces


class Reaction(Wire):
    name: str
    users: list[str]
    count: int


class Edited(Wire):
    user: str
    ts: str


class Message(Wire):
    type: Literal["message"] = "message"
    subtype: str | None = None
    ts: str
    user: str
    text: str
    team: str | None = None
    bot_id: str | None = None
    blocks: list[dict[str, Any]] | None = None
    thread_ts: str | None = None
    parent_user_id: str | None = None
    reply_count: int | None = None
    reply_users_count: int | None = None
    latest_reply: str | None = None
    reply_users: list[str] | None = None
    is_locked: bool | None = None
    subscribed: bool | None = None
    hidden: bool | None = None
    edited: Edited | None = None
    reactions: list[Reaction] | None = None


class Topic(Wire):
    value: str
    creator: str
    last_set: int


class Channel(Wire):
    id: str
    name: str
    is_channel: bool
    is_group: bool
    is_im: bool = False
    is_mpim: bool = False
    is_private: bool
    created: int
    is_archived: bool
    is_general: bool
    unlinked: int = 0
    name_normalized: str
    is_shared: bool = False
    is_org_shared: bool = False
    is_ext_shared: bool = False
    is_pending_ext_shared: bool = False
    pending_shared: list[str] = []
    context_team_id: str
    updated: int
    parent_conversation: None = None
    creator: str
    shared_team_ids: list[str]
    pending_connected_team_ids: list[str] = []
    is_member: bool
    topic: Topic
    purpose: Topic
    previous_names: list[str] = []
    num_members: int | None = None

    def render(self) -> dict[str, Any]:
        # parent_conversation is sent as null by Slack; everything else None is absent.
        return {**render(self), "parent_conversation": None}


class Profile(Wire):
    """A user's profile. Slack's spec requires the empty strings too (``title``, ``phone``,
    ``skype``, ``status_text``, ``status_emoji``), an ``avatar_hash`` and ``fields``."""

    real_name: str
    display_name: str
    real_name_normalized: str
    display_name_normalized: str
    avatar_hash: str
    title: str = ""
    phone: str = ""
    skype: str = ""
    status_text: str = ""
    status_emoji: str = ""
    fields: dict[str, Any] = {}
    team: str
    bot_id: str | None = None
    always_active: bool | None = None


class User(Wire):
    id: str
    team_id: str
    name: str
    deleted: bool
    color: str
    real_name: str
    tz: str
    tz_label: str
    tz_offset: int
    profile: Profile
    is_admin: bool = False
    is_owner: bool = False
    is_primary_owner: bool = False
    is_restricted: bool = False
    is_ultra_restricted: bool = False
    is_bot: bool
    is_app_user: bool = False
    updated: int


class SearchChannel(Wire):
    id: str
    is_channel: bool
    is_group: bool
    is_im: bool = False
    is_mpim: bool = False
    name: str
    is_shared: bool = False
    is_org_shared: bool = False
    is_ext_shared: bool = False
    is_private: bool
    pending_shared: list[str] = []
    is_pending_ext_shared: bool = False


class SearchMatch(Wire):
    iid: str
    team: str
    channel: SearchChannel
    type: Literal["message"] = "message"
    user: str
    username: str
    ts: str
    text: str
    permalink: str


class Pagination(Wire):
    total_count: int
    page: int
    per_page: int
    page_count: int
    first: int
    last: int


class Paging(Wire):
    count: int
    total: int
    page: int
    pages: int


class SearchMessages(Wire):
    total: int
    pagination: Pagination
    paging: Paging
    matches: list[SearchMatch]


# --------------------------------------------------------------------------- responses


class ResponseMetadata(Wire):
    next_cursor: str | None = None
    warnings: list[str] | None = None


class Ok(Wire):
    ok: Literal[True] = True


class ApiTest(Ok):
    args: dict[str, str]


class AuthTest(Ok):
    url: str
    team: str
    user: str
    team_id: str
    user_id: str
    bot_id: str | None = None
    is_enterprise_install: bool = False


class Posted(Ok):
    channel: str
    ts: str
    message: Message


class Updated(Ok):
    channel: str
    ts: str
    text: str
    message: Message


class Deleted(Ok):
    channel: str
    ts: str


class Permalink(Ok):
    channel: str
    permalink: str


class Messages(Ok):
    """``conversations.replies`` (and the base of ``conversations.history``)."""

    messages: list[Message]
    has_more: bool
    response_metadata: ResponseMetadata


class History(Messages):
    """``conversations.history``: Slack adds the channel's pin count and its channel actions
    (``channel_actions_ts`` is null when there are none), all three required by its spec."""

    pin_count: int = 0
    channel_actions_count: int = 0

    def render(self) -> dict[str, Any]:
        return {**render(self), "channel_actions_ts": None}


class ChannelList(Ok):
    channels: list[Channel]
    response_metadata: ResponseMetadata

    def render(self) -> dict[str, Any]:
        return {**render(self), "channels": [c.render() for c in self.channels]}


class ChannelInfo(Ok):
    channel: Channel
    warning: str | None = None
    response_metadata: ResponseMetadata | None = None

    def render(self) -> dict[str, Any]:
        return {**render(self), "channel": self.channel.render()}


class UserList(Ok):
    members: list[User]
    cache_ts: int
    response_metadata: ResponseMetadata


class Members(Ok):
    """``conversations.members``: user ids, paged by cursor."""

    members: list[str]
    response_metadata: ResponseMetadata


class UserInfo(Ok):
    user: User


class Search(Ok):
    query: str
    messages: SearchMessages


def body(model: BaseModel) -> dict[str, Any]:
    """The JSON body of a response model (channels keep their ``parent_conversation: null``,
    history its ``channel_actions_ts: null``)."""
    if isinstance(model, ChannelList | ChannelInfo | History):
        return model.render()
    return render(model)

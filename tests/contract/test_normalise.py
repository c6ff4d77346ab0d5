"""Normalisation keeps identity links and formats, drops what differs between targets."""

from __future__ import annotations

from replay.contract.normalise import Normaliser, shape


def test_same_id_same_reference_everywhere() -> None:
    n = Normaliser(origins={"https://api.github.com": "<api>"})
    n.alias("acme/semverkit", "repo", in_text=True)
    body = {
        "url": "https://api.github.com/repos/acme/semverkit/issues/16",
        "number": 16,
        "id": 2712990418,
        "user": {"id": 7, "login": "x"},
        "assignee": {"id": 7},
        "html_url": "https://github.com/acme/semverkit/issues/16#issuecomment-2712990418",
        "body": "see acme/semverkit#16",
    }
    out = n.normalise(body)
    assert out["url"] == "<api>/repos/<repo>/issues/<id:1>"
    assert out["number"] == "<id:1>"
    assert out["id"] == "<id:2>"
    assert out["user"]["id"] == out["assignee"]["id"] == "<id:3>"
    assert out["html_url"] == "<github.com>/<repo>/issues/<id:1>#issuecomment-<id:2>"
    assert out["body"] == "see <repo>#16"
    # A second body in the same run: the same object keeps its reference.
    assert n.normalise({"id": 2712990418, "number": 17}) == {"id": "<id:2>", "number": "<id:4>"}


def test_times_keep_their_format_and_slack_ts_their_identity() -> None:
    n = Normaliser()
    out = n.normalise(
        {
            "created_at": "2026-03-12T09:00:01Z",
            "updatedAt": "2026-03-12T09:00:01.123Z",
            "other": "2026-03-12T09:00:01+00:00",
            "ts": "1773306000.000100",
            "thread_ts": "1773306000.000100",
            "created": 1773306000,
            "permalink": "https://acme.slack.com/archives/C1/p1773306000000100",
        }
    )
    assert out["created_at"] == "<datetime:Z>"
    assert out["updatedAt"] == "<datetime.ms:Z>"
    assert out["other"] == "<datetime:offset>"
    assert out["ts"] == out["thread_ts"] == "<ts:1>"
    assert out["created"] == "<epoch>"
    assert out["permalink"] == "<acme.slack.com>/archives/C1/p<ts:1>"


def test_link_header_and_shape() -> None:
    n = Normaliser(origins={"http://127.0.0.1:5000": "<api>"})
    n.normalise({"number": 3})
    link = '<http://127.0.0.1:5000/repos/o/r/issues/3/comments?page=2>; rel="next"'
    assert n.link(link) == '<<api>/repos/o/r/issues/<id:1>/comments?page=2>; rel="next"'
    assert shape({"a": [1, "x", 2], "b": None, "c": 1.5, "d": True}) == {
        "a": ["int", "str"],
        "b": "null",
        "c": "float",
        "d": "bool",
    }


def test_paging_params_are_never_taken_for_ids() -> None:
    """A label with id 1 seen earlier must not turn ``page=1`` into its reference; a query
    value that is an id (``ref=<sha>``, a cursor) still is one."""
    n = Normaliser(origins={"http://127.0.0.1:5000": "<api>"})
    n.normalise([{"id": 1, "name": "bug"}, {"id": 2}, {"id": 30}, {"id": 100}, {"number": 7}])
    link = (
        '<http://127.0.0.1:5000/repos/o/r/issues/7/events?per_page=2&page=1>; rel="prev", '
        '<http://127.0.0.1:5000/repos/o/r/issues/7/events?per_page=2&page=1>; rel="first"'
    )
    assert n.link(link) == (
        '<<api>/repos/o/r/issues/<id:5>/events?per_page=2&page=1>; rel="prev", '
        '<<api>/repos/o/r/issues/<id:5>/events?per_page=2&page=1>; rel="first"'
    )
    assert n.url("http://x/conversations.history?limit=30&count=100&offset=2") == (
        "<x>/conversations.history?limit=30&count=100&offset=2"
    )
    sha = "0123456789abcdef0123456789abcdef01234567"
    n.normalise({"sha": sha})
    assert n.url(f"http://x/contents/f?ref={sha}&page=1") == "<x>/contents/f?ref=<sha:1>&page=1"
    assert n.url("http://x/things?since=1") == "<x>/things?since=<id:1>"

"""The runs page's filters by candidate, harness, model, day and batch, over a store whose
runs differ in each (``batched.py``: two batches made by the batch engine, a run outside
them): each filter narrows the list to the runs the store records so, alone and together;
a day that is not one, a range that is empty, an unknown batch get a one-line page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from replay.view import Source, make_app
from tests.compare.htmltree import Node, parse
from tests.view.batched import Batched, make_store


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Batched:
    return make_store(tmp_path_factory.mktemp("view-batched"))


@pytest.fixture(scope="module")
def client(made: Batched) -> Iterator[TestClient]:
    source = Source.open(str(made.db), made.cases)
    try:
        with TestClient(make_app(source)) as client:
            yield client
    finally:
        source.close()


def page(client: TestClient, url: str) -> Node:
    answer = client.get(url)
    assert answer.status_code == 200, (url, answer.status_code, answer.text)
    return parse(answer.text)


def listed(client: TestClient, url: str) -> set[str]:
    rows = page(client, url).by_id("runs").find_all("tr", "run")
    ids = [r.attrs["data-run-id"] for r in rows]
    assert len(ids) == len(set(ids)), url
    return set(ids)


def test_each_filter_narrows_the_runs_to_what_the_store_records(
    client: TestClient, made: Batched
) -> None:
    ids = made.ids
    every = made.every()
    assert listed(client, "/") == every and len(every) == 9
    expected = {
        # The candidate by its name: the runs of every key of that name.
        "/?candidate=gold": ids["gold"],
        "/?candidate=mini": ids["mini"],
        "/?harness=mini-swe-agent": ids["mini"],
        "/?harness=aider": ids["loose"],
        "/?harness=reference": ids["gold"] | ids["gpt"] | ids["broken"],
        "/?model=gpt-4.1": ids["gpt"] | ids["broken"],
        "/?model=stub:gold": ids["gold"],
        "/?model=claude-sonnet-4": ids["loose"],
        # Days of started_at, UTC, both ends included.
        "/?until=2026-12-01": ids["nightly"],
        "/?since=2026-12-02&until=2026-12-02": ids["loose"],
        "/?since=2026-12-03": ids["mini"],
        "/?since=2026-12-02": ids["loose"] | ids["mini"],
        "/?since=2026-12-04": set(),
        # A batch's runs: each planned run's last (weekly's spoiled first try is not one).
        "/?batch=nightly": ids["nightly"],
        "/?batch=weekly": ids["weekly"],
        # Together, and with the filters there were.
        "/?batch=nightly&candidate=gpt": ids["gpt"],
        "/?batch=nightly&model=gpt-4.1&outcome=infra_fail": ids["broken"],
        "/?candidate=mini&outcome=transport_fail": ids["spoiled"],
        "/?case=demo-caret-zero&harness=reference&until=2026-12-01": (
            ids["demo-caret-zero"] & ids["nightly"]
        ),
        # The candidate's whole key, as the store holds it, takes just that candidate too.
        f"/?candidate={made.keys['gpt']}": ids["gpt"],
        # A form sends every field; the ones left at "any" are empty.
        "/?case=&outcome=&comparison=&candidate=&harness=&model=&batch=weekly&since=&until=": (
            ids["weekly"]
        ),
    }
    for url, want in expected.items():
        assert listed(client, url) == want, url
        if want:
            assert want < every, url  # each filter narrows the list
    assert len(ids["weekly"]) == 1 and ids["spoiled"] and not ids["spoiled"] & ids["weekly"]
    assert len(ids["demo-caret-zero"] & ids["nightly"]) == 3

    shown = page(client, "/?batch=nightly&since=2026-12-01").by_id("shown").text()
    assert shown == "6 run(s): started from 2026-12-01, batch nightly"


def test_the_form_offers_every_value_the_store_has_and_keeps_the_chosen_ones(
    client: TestClient,
) -> None:
    form = page(client, "/?candidate=gpt&batch=weekly&since=2026-12-02").by_id("filters")
    offered = {
        s.attrs["name"]: [o.attrs["value"] for o in s.find_all("option")]
        for s in form.find_all("select")
    }
    assert offered["candidate"] == ["", "broken", "gold", "gpt", "mini"]
    assert offered["harness"] == ["", "aider", "mini-swe-agent", "reference"]
    assert offered["model"] == ["", "claude-sonnet-4", "gpt-4.1", "gpt-4.1-mini", "stub:gold"]
    assert offered["batch"] == ["", "nightly", "weekly"]
    chosen = {
        s.attrs["name"]: [o.attrs["value"] for o in s.find_all("option") if "selected" in o.attrs]
        for s in form.find_all("select")
    }
    assert chosen["candidate"] == ["gpt"] and chosen["batch"] == ["weekly"]
    days = {i.attrs["name"]: i for i in form.find_all("input")}
    assert days["since"].attrs["type"] == "text" and days["since"].attrs["value"] == "2026-12-02"
    assert days["until"].attrs["value"] == ""


@pytest.mark.parametrize(
    ("url", "status", "said"),
    [
        ("/?since=2026-13-01", 400, "since '2026-13-01' is not a day: give it as YYYY-MM-DD"),
        ("/?until=yesterday", 400, "until 'yesterday' is not a day: give it as YYYY-MM-DD"),
        ("/?since=12/01/2026", 400, "since '12/01/2026' is not a day"),
        ("/?since=2026-12-03&until=2026-12-01", 400, "since 2026-12-03 is after until 2026-12-01"),
        ("/?batch=nope", 404, "no batch 'nope' in the results store (/batches lists them)"),
        ("/?batch=nightly&since=2026-02-30", 400, "since '2026-02-30' is not a day"),
    ],
)
def test_a_bad_day_or_an_unknown_batch_is_a_one_line_page(
    client: TestClient, url: str, status: int, said: str
) -> None:
    answer = client.get(url)
    assert answer.status_code == status, (url, answer.text)
    body = parse(answer.text).find_all("body")[0]
    assert [n.tag for n in body.children] == ["p"], url
    assert said in body.text() and "\n" not in body.text().strip()

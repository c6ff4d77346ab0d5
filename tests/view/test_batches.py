"""The batches page (``/batches``) over a store with two batches made by the batch engine
(``batched.py``): each batch's plan, when, planned runs, outcome counts and cost, linking to
the runs page filtered by it; every page's navigation reaches it; a store without a batch
says how one is made."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from replay.results import Store
from replay.view import Source, make_app
from tests.compare.htmltree import Node, parse
from tests.view.batched import Batched, make_store


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Batched:
    return make_store(tmp_path_factory.mktemp("view-batches"))


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


def cells(row: Node) -> list[str]:
    return [td.text().strip() for td in row.find_all("td")]


def test_the_batches_page_sums_up_each_batch_and_links_to_its_runs(
    client: TestClient, made: Batched
) -> None:
    tree = page(client, "/batches")
    assert tree.find_all("h1")[0].text() == "Batches"
    rows = {r.attrs["data-batch"]: r for r in tree.by_id("batch-list").find_all("tr", "batch")}
    assert list(rows) == ["weekly", "nightly"]  # the latest first

    nightly = rows["nightly"]
    said = cells(nightly)
    assert said[3:6] == ["6", "0", "6"]  # planned runs claimed, running, runs in the store
    outcomes = nightly.find_all("td", "outcomes")[0].text()
    assert "pass 2" in outcomes and "model fail 2" in outcomes and "infra fail 2" in outcomes
    assert said[7] == "6000"
    # gpt's two runs cost $0.02 each; gold's stub runs and broken's have no cost recorded.
    assert nightly.find_all("td", "cost")[0].text() == "$0.0400 (4 run(s) not priced)"
    assert "name: nightly" in nightly.find_all("pre")[0].text()  # the plan, verbatim

    weekly = cells(rows["weekly"])
    assert weekly[3:6] == ["1", "0", "1"]
    assert rows["weekly"].find_all("td", "outcomes")[0].text().strip() == "pass 1"
    assert rows["weekly"].find_all("td", "cost")[0].text() == "$0.0100"

    for name, row in rows.items():
        link = row.find_all("a")[0]
        assert link.text() == name and link.attrs["href"] == f"/?batch={name}"
        runs = page(client, link.attrs["href"]).by_id("runs").find_all("tr", "run")
        assert {r.attrs["data-run-id"] for r in runs} == made.ids[name]
        assert len(runs) == int(row.find_all("td", "runs")[0].text())


def test_every_page_links_to_the_batches(client: TestClient, made: Batched) -> None:
    some_run = next(iter(made.ids["weekly"]))
    for url in ("/", "/?batch=nightly", "/comparisons", "/batches", f"/runs/{some_run}"):
        nav = page(client, url).find_all("nav")[0]
        hrefs = {a.text(): a.attrs["href"] for a in nav.find_all("a")}
        assert hrefs["Batches"] == "/batches", url


def test_a_store_without_a_batch_says_how_one_is_made(tmp_path: Path) -> None:
    Store.open(str(tmp_path / "empty.db")).close()
    source = Source.open(str(tmp_path / "empty.db"), [])
    try:
        with TestClient(make_app(source)) as client:
            tree = page(client, "/batches")
            assert "No batch yet (replay batch run PLAN" in tree.find_all("main")[0].text()
            assert client.get("/?batch=nightly").status_code == 404
    finally:
        source.close()

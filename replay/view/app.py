"""The live viewer: a FastAPI application over the store and the case files.

``/`` the runs (``?case=&outcome=&comparison=&candidate=&harness=&model=&since=&until=
&batch=``, :mod:`replay.view.filters`), ``/runs/<id>`` one run (its full id or the first
characters ``results list`` shows), ``/comparisons`` and ``/comparisons/<name>``,
``/batches``. Pages are rendered on the server, one request at a time from the store as it is
then (a run still going shows as it stands). A run, comparison or batch that is not there
answers 404 with a one-line page; a filter that is not one (a day that is not ``YYYY-MM-DD``)
answers 400 the same way.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from starlette.exceptions import HTTPException

from replay.view.filters import RunFilters
from replay.view.page import Links, not_found
from replay.view.site import (
    batches_page,
    comparison_page,
    comparisons_page,
    index_page,
    run_page,
)
from replay.view.source import Source


def make_app(source: Source) -> FastAPI:
    """The viewer's application over ``source`` (which the caller closes)."""
    app = FastAPI(title="replay view", docs_url=None, redoc_url=None, openapi_url=None)
    links = Links()

    @app.exception_handler(HTTPException)
    def other(request: Request, exc: HTTPException) -> HTMLResponse:
        # A path no route has (a run id with a slash...) gets a one-line page too.
        return HTMLResponse(not_found(f"{exc.detail}: {request.url.path}"), exc.status_code)

    @app.get("/", response_class=HTMLResponse)
    def runs(
        case: str = "",
        outcome: str = "",
        comparison: str = "",
        candidate: str = "",
        harness: str = "",
        model: str = "",
        since: str = "",
        until: str = "",
        batch: str = "",
    ) -> HTMLResponse:
        filters = RunFilters(
            case=case,
            outcome=outcome,
            comparison=comparison,
            candidate=candidate,
            harness=harness,
            model=model,
            since=since.strip(),
            until=until.strip(),
            batch=batch,
        )
        problem = filters.check()
        if problem is not None:
            return HTMLResponse(not_found(problem), status_code=400)
        if comparison and source.comparison(comparison) is None:
            return HTMLResponse(not_found(f"no comparison {comparison!r}"), status_code=404)
        if batch and not source.has_batch(batch):
            return HTMLResponse(
                not_found(f"no batch {batch!r} in the results store (/batches lists them)"),
                status_code=404,
            )
        return HTMLResponse(index_page(source, filters, links))

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run(run_id: str) -> HTMLResponse:
        row = source.run(run_id)
        if row is None:
            return HTMLResponse(
                not_found(f"no run {run_id!r} in the results store"), status_code=404
            )
        return HTMLResponse(run_page(source, row, links))

    @app.get("/comparisons", response_class=HTMLResponse)
    def comparisons() -> HTMLResponse:
        return HTMLResponse(comparisons_page(source, links))

    @app.get("/batches", response_class=HTMLResponse)
    def batches() -> HTMLResponse:
        return HTMLResponse(batches_page(source, links))

    @app.get("/comparisons/{name:path}", response_class=HTMLResponse)
    def comparison(name: str) -> HTMLResponse:
        row = source.comparison(name)
        if row is None:
            return HTMLResponse(
                not_found(f"no comparison {name!r} in the results store"), status_code=404
            )
        return HTMLResponse(comparison_page(source, row, links))

    return app

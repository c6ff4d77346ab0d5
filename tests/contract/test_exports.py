"""replay.contract exports what its users call, and the typer sub-app has its commands."""

from __future__ import annotations

import replay.contract
from replay.cli.contract import app as contract_app


def test_all_lists_every_public_name() -> None:
    public = {n for n in vars(replay.contract) if not n.startswith("_") and n[0].isupper()}
    public -= {"annotations"}
    for name in replay.contract.__all__:
        assert hasattr(replay.contract, name), name
    assert public <= set(replay.contract.__all__), public - set(replay.contract.__all__)


def test_cli_commands() -> None:
    names = {c.name for c in contract_app.registered_commands}
    assert names == {"run", "record", "coverage"}

"""What model calls cost: a price table per model, in USD per million tokens.

The built-in table (``prices.yaml`` beside this file) is a starting point, not the truth:
providers change prices, so a user passes their own with ``replay run --prices FILE`` (same
format). A model the table does not know has no cost (``None``), never a guessed one.

A key ending in ``*`` prices every model its prefix starts (``stub:*``: every trajectory of
the stub model); an exact key wins over it, a longer prefix over a shorter one.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, RootModel

from replay.base.formats import Strict, load_model

BUILTIN = Path(__file__).with_name("prices.yaml")


class Price(Strict):
    input: float = Field(ge=0)
    """USD per million input tokens."""
    output: float = Field(ge=0)
    """USD per million output tokens."""
    cached_input: float | None = Field(default=None, ge=0)
    """USD per million cached input tokens (the input price when absent)."""


class PriceTable(RootModel[dict[str, Price]]):
    def cost(
        self, model: str, input_tokens: int, output_tokens: int, cached: int = 0
    ) -> float | None:
        price = self.root.get(model) or self._by_prefix(model)
        if price is None:
            return None
        cached_price = price.cached_input if price.cached_input is not None else price.input
        fresh = max(input_tokens - cached, 0)
        return (fresh * price.input + cached * cached_price + output_tokens * price.output) / 1e6

    def _by_prefix(self, model: str) -> Price | None:
        prefixes = [k for k in self.root if k.endswith("*") and model.startswith(k[:-1])]
        return self.root[max(prefixes, key=len)] if prefixes else None


def load_prices(path: Path | None = None) -> PriceTable:
    return load_model(path or BUILTIN, PriceTable)

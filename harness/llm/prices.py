"""The price table: what a model costs per million tokens, so cost and ``llm.max_cost`` mean
something with a real model.

The shipped table (``prices.yaml`` next to this module) is maintained by hand and dated; a file
of the same shape named by ``GALAPAGOS_PRICES`` adds to it or corrects it; a model's own
``input_cost_per_mtok``/``output_cost_per_mtok`` in the run config win over both.  A model found
nowhere has an *unknown* price: its cost is shown as unknown (never as a silent 0), and a run
that sets ``llm.max_cost`` with it is refused (:func:`require_prices`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import ConfigError
from harness.core.llm_config import ModelConfig

__all__ = [
    "Price",
    "PriceTable",
    "load_prices",
    "normalise_name",
    "price_models",
    "require_prices",
    "unpriced",
]

SHIPPED = Path(__file__).with_name("prices.yaml")
ENV = "GALAPAGOS_PRICES"
_DATE = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    provider: str = ""


@dataclass(frozen=True)
class PriceTable:
    """Prices by normalised model name, and the date the table was last reviewed."""

    prices: Mapping[str, Price]
    reviewed: str
    #: Where the table came from (the shipped file, then ``GALAPAGOS_PRICES`` if set).
    files: tuple[str, ...] = ()

    def lookup(self, name: str) -> Price | None:
        return self.prices.get(normalise_name(name))

    def describe(self) -> str:
        return f"price table reviewed {self.reviewed} ({len(self.prices)} models)"


def normalise_name(name: str) -> str:
    """``openai/GPT-4.1-2025-04-14`` → ``gpt-4-1``: no provider prefix, date or ``-latest``
    suffix, ``.`` read as ``-``."""
    base = name.strip().lower().rsplit("/", 1)[-1]
    base = base.removesuffix("-latest")
    base = _DATE.sub("", base)
    return base.replace(".", "-")


def _read(path: Path) -> tuple[dict[str, Price], str]:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read the price table {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML in the price table {path}: {exc}") from exc
    if not isinstance(data, Mapping) or not isinstance(data.get("models"), Mapping):
        raise ConfigError(f"{path}: a price table needs a 'models:' mapping (see {SHIPPED})")
    prices: dict[str, Price] = {}
    for name, entry in data["models"].items():
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{path}: model {name!r} needs {{input: …, output: …}}")
        try:
            provider = str(entry.get("provider", ""))
            price = Price(float(entry["input"]), float(entry["output"]), provider)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"{path}: model {name!r} needs numeric 'input' and 'output' prices per million "
                "tokens"
            ) from exc
        if price.input < 0 or price.output < 0:
            raise ConfigError(f"{path}: model {name!r} has a negative price")
        prices[normalise_name(str(name))] = price
    return prices, str(data.get("reviewed") or "undated")


def load_prices(env: Mapping[str, str] | None = None) -> PriceTable:
    """The shipped table, with ``GALAPAGOS_PRICES``'s entries over it."""
    env = os.environ if env is None else env
    prices, reviewed = _read(SHIPPED)
    files = [str(SHIPPED)]
    extra = env.get(ENV)
    if extra:
        more, when = _read(Path(extra).expanduser())
        prices.update(more)
        reviewed = f"{reviewed}, {when} ({Path(extra).name})"
        files.append(extra)
    return PriceTable(prices, reviewed, tuple(files))


def price_models(models: Sequence[ModelConfig], table: PriceTable) -> tuple[ModelConfig, ...]:
    """``models`` with every price they do not give filled in from ``table`` (unknown prices
    stay ``None``)."""
    out = []
    for model in models:
        found = table.lookup(model.name)
        update: dict[str, Any] = {}
        if model.input_cost_per_mtok is None and found is not None:
            update["input_cost_per_mtok"] = found.input
        if model.output_cost_per_mtok is None and found is not None:
            update["output_cost_per_mtok"] = found.output
        out.append(model.model_copy(update=update) if update else model)
    return tuple(out)


def unpriced(models: Sequence[ModelConfig]) -> list[str]:
    """Names of the models whose price is not known."""
    return list(dict.fromkeys(m.name for m in models if not m.priced))


def require_prices(models: Sequence[ModelConfig], max_cost: float | None, reviewed: str) -> None:
    """Refuse a cost cap that could never trigger: ``max_cost`` set with a model of unknown
    price."""
    missing = unpriced(models)
    if max_cost is None or not missing:
        return
    raise ConfigError(
        f"llm.max_cost={max_cost:g} cannot be enforced: the price of {', '.join(missing)} is "
        f"unknown (not in the price table reviewed {reviewed}); give it in the config "
        "(llm.models[].input_cost_per_mtok and output_cost_per_mtok, USD per million tokens) or "
        f"in a table named by {ENV}, or cap tokens instead (--max-tokens)"
    )

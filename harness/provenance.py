"""What produced a result: the model, provider and endpoint of a stored run, and the versions.

Every view of a run (``galapagos runs``, ``tasks``, ``show``, exports, the hub, the leaderboard)
names its model through :func:`run_llm`, read from the run's stored ``llm:`` section, with the
endpoint's credentials redacted (:func:`harness.core.redact.redact_url`).
"""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.core.redact import redact_url

__all__ = [
    "OFFLINE_LABEL",
    "galapagos_version",
    "git_commit",
    "model_label",
    "run_llm",
    "versions",
]

#: How the offline mutation model is named wherever a model is named.
OFFLINE_LABEL = "offline model"

#: Endpoint hosts of well-known providers (suffix match), to name the provider of a run.
_PROVIDERS = (
    ("api.openai.com", "openai"),
    ("openrouter.ai", "openrouter"),
    ("openai.azure.com", "azure"),
    ("api.anthropic.com", "anthropic"),
    ("generativelanguage.googleapis.com", "google"),
    ("api.deepseek.com", "deepseek"),
    ("api.together.xyz", "together"),
    ("api.groq.com", "groq"),
    ("api.mistral.ai", "mistral"),
    ("api.fireworks.ai", "fireworks"),
)
_LOCAL = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def _host(url: str | None) -> str:
    try:
        parts = urlsplit(url or "")
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return ""
    return f"{host}:{port}" if host and port else host


def _provider(host: str) -> str:
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    for suffix, provider in _PROVIDERS:
        if name == suffix or name.endswith("." + suffix):
            return provider
    if name in _LOCAL:
        return "local endpoint"
    return "openai-compatible"


def run_llm(config: Mapping[str, Any]) -> dict[str, Any]:
    """The model side of a run from its stored config: ``provider`` (``offline``, or a name
    read from the endpoint's host), ``models``, ``endpoint`` (redacted) and ``host``, the
    ``prices`` used (USD per million tokens; ``None``: unknown), the price table's date, and a
    short ``label`` for tables."""
    llm = config.get("llm") if isinstance(config, Mapping) else None
    llm = llm if isinstance(llm, Mapping) else {}
    models = [m for m in llm.get("models") or [] if isinstance(m, Mapping)]
    names = [str(m.get("name")) for m in models]
    offline = llm.get("provider", "offline") == "offline" and not llm.get("api_base")
    prices = {
        str(m.get("name")): (
            {"input": m["input_cost_per_mtok"], "output": m["output_cost_per_mtok"]}
            if m.get("input_cost_per_mtok") is not None
            and m.get("output_cost_per_mtok") is not None
            else None
        )
        for m in [*models, *(g for g in llm.get("guide_models") or [] if isinstance(g, Mapping))]
    }
    if offline:
        return {
            "provider": "offline",
            "models": names or ["galapagos-offline"],
            "endpoint": None,
            "host": None,
            "prices": {name: {"input": 0.0, "output": 0.0} for name in prices},
            "price_table": None,
            "price_unknown": [],
            "label": OFFLINE_LABEL,
        }
    endpoint = redact_url(llm.get("api_base")) or None
    host = _host(endpoint)
    return {
        "provider": _provider(host),
        "models": names,
        "endpoint": endpoint,
        "host": host or None,
        "prices": prices,
        "price_table": llm.get("price_table"),
        "price_unknown": [name for name, price in prices.items() if price is None],
        "label": model_label(names),
    }


def model_label(names: list[str]) -> str:
    """``gpt-4.1-mini``, or ``a + b`` for an ensemble."""
    return " + ".join(dict.fromkeys(names)) or "?"


def galapagos_version() -> str:
    try:
        return importlib.metadata.version("galapagos")
    except importlib.metadata.PackageNotFoundError:  # a checkout that is not installed
        from harness import __version__

        return __version__


def git_commit() -> str | None:
    """The checkout's commit when Galapagos runs from a git checkout (``None`` otherwise)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def versions() -> dict[str, Any]:
    """Versions that can change a result: Galapagos (and its commit in a checkout), Python,
    the platform, and the libraries the host side computes with."""
    libraries: dict[str, str | None] = {}
    for name in ("openai", "numpy", "scipy", "pydantic"):
        try:
            libraries[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            libraries[name] = None
    return {
        "galapagos": galapagos_version(),
        "galapagos_commit": git_commit(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "libraries": libraries,
    }

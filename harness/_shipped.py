"""Where the data folders shipped with Galapagos live: the tasks and the sandbox image recipes
(with the in-container runtime).

In a checkout (or an editable install) they are the repository's ``tasks/`` and
``sandbox_images/``; a built wheel carries copies under ``harness/_shipped/`` (see setup.py),
so a plain ``pip install`` works outside the checkout.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["shipped_dir"]

_HERE = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path:
    """The shipped folder ``name`` (``tasks`` or ``sandbox_images``)."""
    installed = _HERE / "_shipped" / name
    if installed.is_dir():
        return installed
    return _HERE.parent / name

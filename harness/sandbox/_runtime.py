"""Where the in-sandbox runtime lives on the host, and making it importable here.

The runtime (``sandbox_images/runtime/galapagos_sandbox``) is the single source of the wire
codec and result schema; the host imports the same files the images carry.  Importing this
module appends that folder to ``sys.path`` (appended, so nothing on the host is shadowed).
"""

from __future__ import annotations

import sys

from harness._shipped import shipped_dir

__all__ = ["COMPAT_DIR", "IMAGES_DIR", "RUNTIME_DIR"]

IMAGES_DIR = shipped_dir("sandbox_images")
RUNTIME_DIR = IMAGES_DIR / "runtime"
COMPAT_DIR = RUNTIME_DIR / "compat"

if str(RUNTIME_DIR) not in sys.path:
    sys.path.append(str(RUNTIME_DIR))

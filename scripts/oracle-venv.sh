#!/usr/bin/env bash
# Idempotent: the side virtualenv with the reference implementations (SkyDiscover 0.1.0 and
# OpenEvolve 0.4.0 from PyPI) that the differential tests run in subprocesses.  Rebuilt only
# when tests/oracles/requirements.txt changes (its hash is the stamp).  To change the pins:
# pip install the two references in a fresh venv, then pip freeze > that file (keep the header).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[oracle-venv] %s\n' "$*" >&2; }

venv=.oracle-venv
freeze=tests/oracles/requirements.txt
want=$(sha256sum "$freeze" | cut -d' ' -f1)
stamp="$venv/.freeze-sha256"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
log "building $venv from $freeze (one-time; cached by the file's hash)"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$freeze" 2> >(grep -v "is ignored" >&2)
"$venv/bin/python" -c "import skydiscover, openevolve" >/dev/null
echo "$want" > "$stamp"
log "ready: $("$venv/bin/python" -c 'from importlib.metadata import version as v; print("skydiscover", v("skydiscover"), "openevolve", v("openevolve"))')"

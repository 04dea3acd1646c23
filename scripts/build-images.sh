#!/usr/bin/env bash
# Build the sandbox images (idempotent: only images whose recipe changed are rebuilt).
# Needs a running engine (bash scripts/docker-engine.sh) and mmdebstrap for the base image.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/docker-engine.sh
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
exec "$PY" -m harness.cli sandbox build "$@"

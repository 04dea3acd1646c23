#!/usr/bin/env bash
# Idempotent set-up: Docker engine, the project's virtualenv, the sandbox images.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[bootstrap] %s\n' "$*" >&2; }

bash scripts/docker-engine.sh

if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  python3 -m venv .venv
fi
stamp=.venv/.galapagos-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  log "installing galapagos and its dependencies into .venv"
  .venv/bin/pip install -q --disable-pip-version-check -e '.[dev]'
  touch "$stamp"
fi

log "building sandbox images (skipped when up to date)"
.venv/bin/galapagos sandbox build

#!/usr/bin/env bash
# Idempotent set-up: Docker engine, the project's virtualenv, the sandbox images.
# --no-docker: the virtualenvs only (the fast test tier: no engine, images or browser).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[bootstrap] %s\n' "$*" >&2; }

docker=yes
[ "${1:-}" = "--no-docker" ] && docker=no

system_packages() {
bash scripts/docker-engine.sh

# The base sandbox image is a Debian root filesystem made by mmdebstrap (no registry needed).
if ! command -v mmdebstrap >/dev/null 2>&1; then
  log "installing mmdebstrap from Debian's packages (one-time)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq mmdebstrap >/dev/null
fi

# The browser tests drive Debian's Chromium (Playwright's own download needs a CDN we lack).
if ! command -v chromium >/dev/null 2>&1; then
  log "installing chromium from Debian's packages (one-time, for the browser tests)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
}

if [ "$docker" = yes ]; then
  system_packages
fi

if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  python3 -m venv .venv
fi
stamp=.venv/.galapagos-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  log "installing galapagos and its dependencies into .venv"
  .venv/bin/pip install -q --disable-pip-version-check -e '.[dev,ray]'
  touch "$stamp"
fi

# The reference implementations, for the differential tests (a side venv, never imported here).
bash scripts/oracle-venv.sh

if [ "$docker" = yes ]; then
  log "building sandbox images (skipped when up to date)"
  .venv/bin/galapagos sandbox build
fi

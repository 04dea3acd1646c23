#!/usr/bin/env bash
# Idempotent: install Docker's engine from Debian's packages if absent, start dockerd, wait for it.
set -euo pipefail

log() { printf '[docker-engine] %s\n' "$*" >&2; }

if docker info >/dev/null 2>&1; then
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  log "installing docker.io from Debian's packages (one-time, ~1 min)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq docker.io >/dev/null
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
  log "starting dockerd"
  mkdir -p /var/log
  nohup dockerd >/var/log/galapagos-dockerd.log 2>&1 &
fi

for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    log "engine ready"
    exit 0
  fi
  sleep 0.5
done
log "dockerd did not answer within 60 s; see /var/log/galapagos-dockerd.log"
exit 1

#!/usr/bin/env bash
# Set everything up, then run the whole test suite (unit, real-Docker integration, red team).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest -q --durations=15 "$@"

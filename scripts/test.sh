#!/usr/bin/env bash
# Set everything up, then run the whole test suite (unit, real-Docker integration, red team).
# CI runs exactly this (.ci/run).  Extra arguments go to pytest.
#
#   bash scripts/test.sh --fast   the inner loop: no Docker, no browser, no test marked slow
#                                 (set-up without the engine and images)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fast" ]; then
  shift
  bash scripts/bootstrap.sh --no-docker
  exec .venv/bin/python -m pytest -q --durations=15 -m "not docker and not browser and not slow" "$@"
fi
bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest -q --durations=15 "$@"

#!/usr/bin/env bash
# Set everything up, then run the main job: best_of_n on circle_packing, 30 iterations, offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/galapagos run --scaffold best_of_n --task circle_packing --iterations 30 "$@"

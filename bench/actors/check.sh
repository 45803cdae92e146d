#!/usr/bin/env bash
# Regression checks of the actors module (bench/run actors --check): the
# send-path instruction-count guard (send_cost.py). BUILD=<absolute build dir>.
set -euo pipefail
python3 "$(dirname "$0")/send_cost.py" "$BUILD/bench/actors/actors_send_cost"

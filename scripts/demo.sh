#!/usr/bin/env bash
# Sets up (packages, venv, build) and runs the demo on bundled data.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
exec .venv/bin/python models/demo/run_demo.py "$@"

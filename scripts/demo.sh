#!/usr/bin/env bash
# Sets up (packages, venv, build) and runs a demo on bundled or generated data:
#   scripts/demo.sh          # the PointNet++ shape classifier (models/demo)
#   scripts/demo.sh pose     # 6D poses from RGB-D frames (models/demo_pose)
#   scripts/demo.sh detect   # boxes from LiDAR scans (models/demo_det)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
case "${1:-}" in
  pose) shift; exec .venv/bin/python models/demo_pose/run_demo.py "$@" ;;
  detect) shift; exec .venv/bin/python models/demo_det/run_demo.py "$@" ;;
  *) exec .venv/bin/python models/demo/run_demo.py "$@" ;;
esac

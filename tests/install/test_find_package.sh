#!/usr/bin/env bash
# Installs pointrt from BUILD_DIR into a temporary prefix, builds examples/cpp against it with
# find_package(pointrt), and runs it on a model.
set -euo pipefail
BUILD_DIR=$1; SOURCE_DIR=$2; MODEL=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$BUILD_DIR" --prefix "$work/prefix" >/dev/null
cmake -S "$SOURCE_DIR/examples/cpp" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/run_model" "$MODEL"

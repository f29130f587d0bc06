#!/usr/bin/env bash
# Installs everything pointrt needs (Debian packages, a Python venv with the PyPI extras) and
# builds it. Idempotent and quiet when everything is already there.
#   scripts/setup.sh            # Release build in build/
#   BUILD_DIR=build-asan CMAKE_ARGS="-DPOINTRT_SANITIZE=ON" scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake ninja-build ccache pkg-config git zlib1g-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata libdnnl-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev python3-venv python3-pip python3-numpy python3-torch
  clang clang-format libclang-rt-14-dev unzip libpng-dev locales libopenblas0-pthread)
# libopenblas0-pthread: Debian's torch 1.13 takes its BLAS from the libblas.so.3 alternative; without
# OpenBLAS that is the reference BLAS, 60x slower (a full-size PVN3D export took 112 s instead of ~15 s).

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The en_US.UTF-8 locale: ONNX Runtime's StringNormalizer (and so `check`'s agreement test) needs it.
if ! locale -a 2>/dev/null | grep -qi '^en_US\.utf-\?8$'; then
  echo "setup: generating the en_US.UTF-8 locale"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO localedef -i en_US -f UTF-8 en_US.UTF-8
fi

# Python: Debian's torch 1.13 (CPU) plus PyPI's onnx/onnxruntime in a venv that sees it.
# onnx 1.16.2 is the newest wheel that still ships the backend node tests' .pb files.
VENV=.venv
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV (with Debian's system site-packages for torch)"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
# matplotlib (compare's --plot) is pinned below 3.10 and installed with "numpy<2" so that pip keeps numpy 1.x.
# ml_dtypes: onnxruntime.quantization (the int8 model tests) imports it.
# onnxconverter-common (the float16 model tests convert files with it) without its pinned protobuf.
if ! "$VENV/bin/python" -c "import onnx, onnxruntime, spconv, matplotlib, ml_dtypes, onnxconverter_common; assert onnx.__version__ == '1.16.2'" 2>/dev/null; then
  echo "setup: installing Python packages into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "numpy<2" "onnx==1.16.2" "onnxruntime" pytest spconv "matplotlib<3.10" ml_dtypes
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps onnxconverter-common
fi
# The checkout's package on the venv's path (a .pth file; CMake builds pointrt._pointrt into
# python/pointrt/). `pip install ./python` is the users' way: it compiles everything once more.
use_checkout_package() {  # use_checkout_package VENV
  local site
  site=$("$1/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  if [ "$(cat "$site/pointrt-checkout.pth" 2>/dev/null)" != "$PWD/python" ]; then
    "$1/bin/pip" uninstall -q -y pointrt >/dev/null 2>&1 || true  # an earlier editable install
    echo "$PWD/python" > "$site/pointrt-checkout.pth"
  fi
}
use_checkout_package "$VENV"

# A second venv with PyPI's current torch 2.x for the export tests of both torch exporters
# (TorchScript and dynamo). Its own site-packages (no Debian torch). torch is installed without
# its dependencies and then only the CUDA libraries that `import torch` links
# (scripts/torch2_requirements.py): 4.0 GB instead of 5.5 GB. POINTRT_TORCH2=0 skips it.
TORCH2_VERSION=2.15.0
VENV2=.venv-torch2
if [ "${POINTRT_TORCH2:-1}" = "1" ]; then
  [ -x "$VENV2/bin/python" ] || { echo "setup: creating $VENV2 (PyPI torch $TORCH2_VERSION)"; /usr/bin/python3 -m venv "$VENV2"; }
  if ! "$VENV2/bin/python" -c "import torch, onnxscript, onnxruntime, pytest; assert torch.__version__.split('+')[0] == '$TORCH2_VERSION'" 2>/dev/null; then
    echo "setup: installing torch $TORCH2_VERSION (CPU-needed libraries only), onnxscript, onnxruntime into $VENV2"
    "$VENV2/bin/pip" install -q --disable-pip-version-check --no-deps "torch==$TORCH2_VERSION"
    mapfile -t torch_deps < <("$VENV2/bin/python" scripts/torch2_requirements.py)
    "$VENV2/bin/pip" install -q --disable-pip-version-check "${torch_deps[@]}" "numpy<2" onnx onnxscript onnxruntime pytest
  fi
  use_checkout_package "$VENV2"
fi

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
TORCH2_TESTS=ON; [ "${POINTRT_TORCH2:-1}" = "1" ] || TORCH2_TESTS=OFF
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DPython3_EXECUTABLE="$PWD/$VENV/bin/python" -DPOINTRT_TEST_TORCH2=$TORCH2_TESTS ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"

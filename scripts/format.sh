#!/usr/bin/env bash
# Formats the C++ sources with the repository's .clang-format (clang-format 14, Debian).
#   scripts/format.sh            # every tracked C++ file
#   scripts/format.sh --check    # exit 1 and list the files that are not formatted
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f"; bad=1; fi
  done
  exit $bad
fi
clang-format -i "${files[@]}"

#!/usr/bin/env bash
# Formats the C++ sources with the repository's .clang-format (clang-format 14, Debian).
#   scripts/format.sh            # every tracked C++ file
#   scripts/format.sh --check    # exit 1 and list the files that are not formatted
# CLANG_FORMAT=/path/to/clang-format picks the binary (default: clang-format on PATH).
set -euo pipefail
cf=${CLANG_FORMAT:-clang-format}
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
[ ${#files[@]} -gt 0 ] || { echo "format.sh: no tracked C++ files (not a git checkout?)" >&2; exit 1; }
if [ "${1:-}" = "--check" ]; then
  # One clang-format call for every file (a process per file took ~6x longer); its diagnostics
  # ("file:line:col: error: code should be clang-formatted") name the files.
  if out=$("$cf" --dry-run -Werror "${files[@]}" 2>&1); then exit 0; fi
  bad=$(printf '%s\n' "$out" | grep -E '^[^ :]+:[0-9]+:[0-9]+: error' | cut -d: -f1 | sort -u) || true
  if [ -n "$bad" ]; then sed 's/^/not formatted: /' <<<"$bad"; else printf '%s\n' "$out" >&2; fi
  exit 1
fi
"$cf" -i "${files[@]}"

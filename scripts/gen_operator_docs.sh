#!/usr/bin/env bash
# Regenerates docs/operators.md from the operator table (`pointrt list-ops --markdown`).
#   scripts/gen_operator_docs.sh [CLI]            # rewrite the file
#   scripts/gen_operator_docs.sh --check [CLI]    # exit 1 if the file is stale (a CTest test)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
cli=${1:-build/pointrt}
generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
{
  cat <<'HEAD'
# Operator table

Generated from the runtime's operator table by `scripts/gen_operator_docs.sh` (a test fails
when this file and the table disagree). One row per kernel: the domain, the operator, the opset
versions it serves, the element types of its main input, and notes. A model node is served when
its (domain, operator) has a row whose range holds the model's opset for that domain.

The `pointrt` domain's semantics are specified in [operators-pointnet2.md](operators-pointnet2.md),
[operators-sparse.md](operators-sparse.md) (after OPS.md), [operators-pose.md](operators-pose.md) and
[operators-detect.md](operators-detect.md); standard operators follow the ONNX
specification, checked by the ONNX backend node tests (`ctest -R conformance`).

HEAD
  "$cli" list-ops --markdown
} > "$generated"
if [ "$check" = 1 ]; then
  if ! diff -q "$generated" docs/operators.md >/dev/null; then
    echo "docs/operators.md is stale: run scripts/gen_operator_docs.sh"
    diff "$generated" docs/operators.md | head -20
    exit 1
  fi
  echo "docs/operators.md matches the operator table"
else
  cp "$generated" docs/operators.md
  echo "wrote docs/operators.md"
fi

#!/usr/bin/env bash
# One command from a fresh Debian 12 machine: install the dependencies, build,
# and run semroute on a model bundled with the sources (no download).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
model=tests/data/bert_seqcls
echo
echo "== semroute info $model"
./build/cli/semroute info "$model"
echo
echo "== semroute forward $model (token ids from its reference cases)"
./build/cli/semroute forward "$model" "$model/reference.json"

#!/usr/bin/env bash
# Installs the build (BUILD_DIR, default ./build) into a temporary prefix and
# builds consumers against the installed tree only: the C++ example with
# find_package(semroute), the C example with pkg-config, the Go package's
# tests and the Go example through the installed semroute.pc. Each consumer
# then runs on a tiny model.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build_dir=$(realpath "${BUILD_DIR:-build}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
pc_dir=$(dirname "$(find "$prefix" -name semroute.pc)")
lib_dir=$(dirname "$(find "$prefix" -name 'libsemroute.so.*' | head -1)")
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
export LD_LIBRARY_PATH=$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

"$build_dir/cli/semroute" make-model tiny "$work/intent" --labels math,law,other \
  --tokenizer tests/data/tokenizers/modernbert/tokenizer.json >/dev/null
"$build_dir/cli/semroute" make-model tiny "$work/pii" --token-labels O,B-EMAIL,I-EMAIL --seed 7 \
  --tokenizer tests/data/tokenizers/modernbert/tokenizer.json >/dev/null
expect() {  # expect PATTERN COMMAND...: runs COMMAND, fails unless its output matches
  local pattern=$1 out
  shift
  out=$("$@")
  grep -Eq "$pattern" <<<"$out" || { echo "unexpected output of $*:"; echo "$out"; exit 1; }
}

echo "== C++ consumer (find_package)"
cmake -S examples/cpp -B "$work/cpp" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cpp" >/dev/null
expect '^(math|law|other) +0\.[0-9]+  What is 2\+2\?' "$work/cpp/classify_cpp" "$work/intent" "What is 2+2?"

echo "== C consumer (pkg-config)"
mkdir -p "$work/c"
PKG_CONFIG_PATH=$pc_dir make -s -C examples/c BUILD="$work/c"
expect '^(math|law|other) +0\.[0-9]+  What is 2\+2\?' "$work/c/classify" "$work/intent" "What is 2+2?"
expect 'Mail jane@example.com' "$work/c/classify" "$work/pii" "Mail jane@example.com"

echo "== Go package and example (pkg-config)"
# A private build cache: Go's shared one can hand back the cgo package with
# the link flags of an earlier install (another prefix, since deleted).
export GOCACHE=$work/gocache
PKG_CONFIG_PATH=$pc_dir scripts/test-go.sh
cd "$root/examples/go"
PKG_CONFIG_PATH=$pc_dir go build -o "$work/classify_go" ./classify
expect '^(math|law|other) +0\.[0-9]+  What is 2\+2\?' "$work/classify_go" -intent "$work/intent" -pii "$work/pii" "What is 2+2?"
echo "== vLLM Semantic Router drop-in (libcandle_semantic_router.so, installed)"
cd "$root"
CANDLE_LIB_DIR=$lib_dir PKG_CONFIG_PATH=$pc_dir BUILD_DIR=$build_dir scripts/test-candle-go.sh
echo "install consumers: all passed"

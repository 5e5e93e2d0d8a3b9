#!/usr/bin/env bash
# Configures (once) and builds semroute in ./build (override with BUILD_DIR).
#   scripts/build.sh [--target NAME...] [CMAKE CONFIGURE OPTIONS...]
# --target builds only the named targets (quickstart.sh: the library and the
# CLI); the other arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
targets=() configure=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--target" ]; then
    shift
    while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do targets+=("$1"); shift; done
  else
    configure+=("$1"); shift
  fi
done
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${configure[@]}"
elif [ ${#configure[@]} -gt 0 ]; then
  cmake -S . -B "$build_dir" "${configure[@]}"
fi
cmake --build "$build_dir" --parallel "$(nproc)" ${targets[@]:+--target "${targets[@]}"}

#!/usr/bin/env bash
# Coverage-guided fuzzing: builds every fuzz target (tests/fuzz) with clang,
# libFuzzer and ASan + UBSan in ./build-fuzz, then runs each for SECONDS
# (default 60) on a corpus seeded from the repository (tests/fuzz/corpus and
# the fixtures). A crash stops the run with the reproducer saved under
# build-fuzz/findings/<target>/; add it to tests/fuzz/corpus/<target>/ (the
# ctest replay then keeps it as a regression case).
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 3600 yaml
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors config tokenizer tokenizer_json adapter_config yaml capi_batch router_request service http compress sse
  candle_instance)

build_dir=build-fuzz
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  CC=clang CXX=clang++ cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1" "-DCMAKE_C_FLAGS_RELEASE=-O1 -g1" \
    "-DSEMROUTE_SANITIZE=address;undefined;fuzzer-no-link" -DSEMROUTE_BUILD_FUZZERS=ON \
    -DSEMROUTE_BUILD_EXAMPLES=OFF -DSEMROUTE_BUILD_BENCHMARKS=OFF
fi
cmake --build "$build_dir" --parallel "$(nproc)" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export SEMROUTE_NUM_THREADS=1
status=0
for name in "${targets[@]}"; do
  corpus=$build_dir/corpus/$name findings=$build_dir/findings/$name
  mkdir -p "$corpus" "$findings"
  while read -r seed; do
    [ -n "$seed" ] && cp -f "$seed" "$corpus/$(basename "$(dirname "$seed")")-$(basename "$seed")"
  done <"$build_dir/tests/fuzz/fuzz_$name.seeds"
  echo "== fuzz_$name: ${seconds}s"
  # -rss_limit_mb: an input that makes the process grow past 2 GB is a finding.
  if ! "$build_dir/tests/fuzz/fuzz_$name" "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 \
      -max_len=262144 -timeout=30 -artifact_prefix="$findings/" -print_final_stats=1 2>"$findings/log.txt"; then
    echo "fuzz_$name FOUND A PROBLEM: $(ls "$findings" | grep -v log.txt | head -3)"
    tail -40 "$findings/log.txt"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$findings/log.txt" | tr '\n' ' '
    echo
  fi
done
exit $status

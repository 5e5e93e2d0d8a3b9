#!/usr/bin/env bash
# Tests libcandle_semantic_router.so (the vLLM Semantic Router drop-in) from
# Go, linked the way the router links it (-lcandle_semantic_router -ldl -lm,
# the directory in CGO_LDFLAGS, LD_LIBRARY_PATH at run time), under the race
# detector, against semroute's own Go package on the same tiny models.
# CANDLE_LIB_DIR: the directory holding the library (default: the build's).
# PKG_CONFIG_PATH: the libsemroute of the reference answers (default: the build's).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build_dir=$(realpath "${BUILD_DIR:-build}")
cli=${SEMROUTE_CLI:-$build_dir/cli/semroute}
lib_dir=$(realpath "${CANDLE_LIB_DIR:-$build_dir/compat/candle}")
export PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-$build_dir/pkgconfig}

models=$(mktemp -d)
trap 'rm -rf "$models"' EXIT
bpe=tests/data/tokenizers/modernbert/tokenizer.json
tiny256=$root/tests/data/tokenizers/tiny256/tokenizer.json
"$cli" make-model tiny "$models/intent" --labels math,law,biology,other --tokenizer "$bpe" >/dev/null
"$cli" make-model tiny "$models/jailbreak" --labels benign,jailbreak --seed 3 --tokenizer "$bpe" >/dev/null
"$cli" make-model tiny "$models/nli" --labels entailment,neutral,contradiction --seed 13 --tokenizer "$bpe" >/dev/null
"$cli" make-model tiny "$models/pii" --seed 7 --tokenizer "$bpe" \
  --token-labels O,B-EMAIL_ADDRESS,I-EMAIL_ADDRESS,B-PERSON,I-PERSON >/dev/null
"$cli" make-model tiny "$models/halu" --token-labels SUPPORTED,HALLUCINATED --seed 11 --tokenizer "$bpe" >/dev/null
# The reference fixtures as published directories: the 256-token tokenizer beside them.
# Copies, not symlinks: a model folder's files must lie inside it (see "Security model").
published() {  # published FIXTURE NAME
  mkdir -p "$models/$2"
  cp -r "$root/tests/data/$1"/. "$models/$2/"
  cp "$tiny256" "$models/$2/tokenizer.json"
}
published qwen3_embedding qwen3
published embeddinggemma gemma
published bert_embedding bert
mkdir -p "$models/multitask"
published multitask_lora/base multitask/base
# Copies: the adapters name their base as "../base".
for task in intent pii security; do cp -r "$root/tests/data/multitask_lora/$task" "$models/multitask/$task"; done

export CANDLE_TEST_MODELS=$models
export CGO_LDFLAGS="-L$lib_dir"
export LD_LIBRARY_PATH=$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cd tests/compat/candle_go
echo "go: linking $lib_dir/libcandle_semantic_router.so"
go vet ./...
go test -race -count=1 ./... "$@"
# RSS over 20 000 calls, without the race detector's shadow memory.
go test -count=1 -run TestNoLeakOver20000Calls -v ./... | grep -E "RSS|ok|FAIL"

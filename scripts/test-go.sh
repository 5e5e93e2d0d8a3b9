#!/usr/bin/env bash
# Tests the Go package (bindings/go) with the race detector, and its pure-Go
# fallback without cgo. Makes tiny test models with the CLI, and the CLI's
# answers for them, which the Go results must equal.
# PKG_CONFIG_PATH chooses the libsemroute that is linked; by default the
# build tree's (BUILD_DIR, default ./build) through semroute-uninstalled.pc.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=$(realpath "${BUILD_DIR:-build}")
cli=${SEMROUTE_CLI:-$build_dir/cli/semroute}
export PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-$build_dir/pkgconfig}

models=$(mktemp -d)
trap 'rm -rf "$models"' EXIT
tokenizer=tests/data/tokenizers/modernbert/tokenizer.json
"$cli" make-model tiny "$models/intent" --labels math,law,biology,other --tokenizer "$tokenizer" >/dev/null
"$cli" make-model tiny "$models/pii" --token-labels O,B-EMAIL,I-EMAIL,B-PERSON,I-PERSON --seed 7 \
  --tokenizer "$tokenizer" >/dev/null
"$cli" classify "$models/intent" "What is the derivative of x^2?" "Is this contract binding?" \
  "Ünïcödé — 日本語のテキスト" --json >"$models/intent.json"
"$cli" tokens "$models/pii" "Contact john.smith@example.com or Jane Doe." "Écrivez à josé@exemple.fr" \
  --json >"$models/pii.json"
"$cli" make-model tiny "$models/reranker" --pair-scorer --seed 9 --tokenizer "$tokenizer" >/dev/null
"$cli" rerank "$models/reranker" "how do I reset my password" "Open settings, then Reset." "Lisbon is in Portugal." \
  "Passwords reset by mail." --json >"$models/rerank.json"
embed_texts=("solve for x" "court ruling" "protein folding")
printf '%s\n' "${embed_texts[@]}" >"$models/embed.txt"
"$cli" embed "$models/intent" "${embed_texts[@]}" --json >"$models/embed.json"
# Prompt compression and hallucination detection: the CLI's answers.
{ echo "Please read the report."; for i in $(seq 1 200); do echo "Nothing new happened in week $((i % 9))."; done
  echo "The Lisbon office closed after the audit of 2024."; echo "What changed?"; } >"$models/long.txt"
"$cli" compress "$models/long.txt" --max-tokens 40 --tokenizer "$tokenizer" --json >"$models/compress.json"
"$cli" make-model tiny "$models/vela2" --vela2 both --max-length 512 --seed 31 --tokenizer "$tokenizer" >/dev/null
"$cli" make-model tiny "$models/halluc" --token-labels SUPPORTED,HALLUCINATED --seed 5 --tokenizer "$tokenizer" >/dev/null
echo "The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall." >"$models/context.txt"
printf 'It was finished in 1889. It is 500 metres tall!\nParis is in Spain.' >"$models/answer.txt"
"$cli" check-answer "$models/halluc" --context "$models/context.txt" --question "Tell me about the tower." \
  "$models/answer.txt" --json >"$models/halluc.jsonl" || [ $? -eq 3 ]

export SEMROUTE_TEST_MODELS=$models
export SEMROUTE_CLI=$cli  # sidecar_test.go starts `semroute serve` with it
cd bindings/go
echo "go: linking $(pkg-config --variable=libdir semroute)/libsemroute.so"
go vet ./...
go test -race -count=1 ${GO_TEST_VERBOSE:+-v} ${GO_TEST_RUN:+-run "$GO_TEST_RUN"} ./...
CGO_ENABLED=0 go test -count=1 ./...

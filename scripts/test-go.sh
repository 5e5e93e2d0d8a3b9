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
embed_texts=("solve for x" "court ruling" "protein folding")
printf '%s\n' "${embed_texts[@]}" >"$models/embed.txt"
"$cli" embed "$models/intent" "${embed_texts[@]}" --json >"$models/embed.json"

export SEMROUTE_TEST_MODELS=$models
cd bindings/go
echo "go: linking $(pkg-config --variable=libdir semroute)/libsemroute.so"
go vet ./...
go test -race -count=1 ./...
CGO_ENABLED=0 go test -count=1 ./...

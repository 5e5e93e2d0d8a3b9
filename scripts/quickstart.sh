#!/usr/bin/env bash
# One command from a fresh Debian 12 machine: install the dependencies, build,
# and run semroute's main job on models made locally (no download): a tiny
# random-weight ModernBERT with the real ModernBERT tokenizer classifies
# prompts and extracts spans, and a bundled BERT checkpoint is inspected.
# (Random weights: the labels are arbitrary; the pipeline is the real one.)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
cli=./build/cli/semroute
models=build/quickstart-models
tokenizer=tests/data/tokenizers/modernbert/tokenizer.json
$cli make-model tiny "$models/intent" --labels math,law,biology,other --tokenizer "$tokenizer"
$cli make-model tiny "$models/pii" --token-labels O,B-EMAIL,I-EMAIL,B-PERSON,I-PERSON --tokenizer "$tokenizer" --seed 7
echo
echo "== semroute classify (intent)"
$cli classify "$models/intent" "What is the derivative of x^2 + 3x?" "Is a verbal contract legally binding?"
echo
echo "== semroute tokens (PII spans, byte offsets)"
$cli tokens "$models/pii" "Contact Zoë at zoe@example.com or +1 555 0100"
echo
echo "== semroute embed (2D Matryoshka: layer 2, 16 dims)"
$cli embed "$models/intent" "How do I bake bread?" "A recipe for sourdough" --layer 2 --dim 16
echo
echo "== semroute info tests/data/bert_seqcls"
$cli info tests/data/bert_seqcls

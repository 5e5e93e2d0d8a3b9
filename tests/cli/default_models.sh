#!/usr/bin/env bash
# The default models (models/) on prompts with known right answers
# (tests/cli/default_models/*.tsv, written for this test): every answer well
# formed whatever the model (tests/cli/score_answers.py), and accuracy at or
# above a floor set a little under what the shipped models score today, so
# that a better model passes and a worse one fails. The README and the
# quickstart show some of these answers, misses included; they are not
# pinned here. Then the calibration and the thresholds the router configs
# take from the model cards.
set -euo pipefail
cli=$1 models=$2
here=$(cd "$(dirname "$0")" && pwd)
prompts=$here/default_models
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
# score COMMAND NAME FLOOR PROMPTS LABELS_FILE MODEL_DIR [OPTION...]: the
# model answers each prompt (semroute COMMAND --input), score_answers.py
# checks the answers' form and their accuracy against FLOOR.
score() {
  local command=$1 name=$2 floor=$3 tsv=$4 labels=$5
  shift 5
  cut -f2 "$tsv" | "$cli" "$command" "$@" --input - > "$work/$name.jsonl" ||
    { echo "FAIL $name: semroute $command failed"; fail=1; return 0; }
  python3 "$here/score_answers.py" "$command" "$name" "$floor" "$tsv" "$work/$name.jsonl" "$labels" || fail=1
}
d=$models/domain j=$models/jailbreak p=$models/pii
base=$models/multitask/base adapters=$models/multitask
# Today (the models trained on the textbooks): domain 55/69 (0.797), its
# adapter 56/69 (0.812); jailbreak 23/24 (0.958), its adapter 18/24 (0.750:
# below the previous adapter's 22/24, which is why models/router.yaml answers
# security with the full model); PII 15/16 (0.938), its adapter 14/16 (0.875).
score classify domain 0.75 "$prompts/domain.tsv" "$d/config.json" "$d"
score classify domain-adapter 0.75 "$prompts/domain.tsv" "$adapters/domain/labels.json" "$base" --adapter "$adapters/domain"
score classify jailbreak 0.90 "$prompts/jailbreak.tsv" "$j/config.json" "$j"
score classify jailbreak-adapter 0.70 "$prompts/jailbreak.tsv" "$adapters/jailbreak/labels.json" "$base" \
  --adapter "$adapters/jailbreak"
score tokens pii 0.85 "$prompts/pii.tsv" "$p/config.json" "$p"
score tokens pii-adapter 0.80 "$prompts/pii.tsv" "$adapters/pii/labels.json" "$base" --adapter "$adapters/pii"

# Calibrated: each sequence model carries its temperature, and both router
# configs alarm at the threshold picked on validation for the path they
# answer on: the full model's (the unified classifier answers security with
# it too).
for m in "$d" "$j" "$models/multitask/domain" "$models/multitask/jailbreak"; do
  grep -q '"semroute_temperature"' "$m/config.json" "$m/labels.json" 2>/dev/null || { echo "FAIL $m: no temperature"; fail=1; }
done
card_value() {  # MODEL_DIR KEY (a.b): a value of the model's evaluation.json
  python3 -c 'import json, sys; from functools import reduce
print(reduce(lambda v, k: v[k], sys.argv[2].split("."), json.load(open(sys.argv[1]))))' "$1/evaluation.json" "$2"
}
threshold=$(card_value "$j" alarm.threshold)
grep -q "jailbreak.risk >= $threshold\"" "$models/../examples/router/router.yaml" ||
  { echo "FAIL examples/router/router.yaml does not alarm at the jailbreak card's threshold $threshold"; fail=1; }
grep -q "model: jailbreak, positive_labels: \[jailbreak\], threshold: $threshold}" "$models/router.yaml" ||
  { echo "FAIL models/router.yaml does not alarm at the jailbreak card's threshold $threshold"; fail=1; }

# The PII thresholds are the cards' too (picked on validation): the model's
# in the router example, the adapter's in the unified classifier.
grep -q "models/pii, threshold: $(card_value "$models/pii" entity_threshold)}" "$models/../examples/router/router.yaml" ||
  { echo "FAIL examples/router/router.yaml does not keep entities at the PII card's threshold"; fail=1; }
grep -q "adapter: multitask/pii, threshold: $(card_value "$models/multitask/pii" entity_threshold)}" "$models/router.yaml" ||
  { echo "FAIL models/router.yaml does not keep entities at the PII adapter card's threshold"; fail=1; }

# The unified classifier answers on both paths (its answers are scored above, task by task).
"$cli" unified "$models/router.yaml" "Call me at 212-555-0187, this is David Kim." --json > /dev/null
"$cli" unified "$models/router.yaml" "Call me at 212-555-0187, this is David Kim." --accuracy --json > /dev/null
[ $fail = 0 ] && echo "default models: ok"
exit $fail

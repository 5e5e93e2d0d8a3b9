#!/usr/bin/env bash
# `semroute train` end to end on a few rows written here: a sequence
# classifier from a preset (a source held out, calibrated, `semroute
# calibrate` again), a LoRA adapter on it, a token classifier; each output
# answers through `semroute classify` / `tokens`; a checkpointed run resumes
# to the same weights; models trained from one start average into one.
set -euo pipefail
cli=$1 tokenizer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# label_is LABEL TEXT MODEL_DIR [OPTION...]: the model's top label for TEXT is LABEL.
label_is() {
  local want=$1 text=$2 got
  shift 2
  got=$("$cli" classify "$@" --json -- "$text" | python3 -c 'import json, sys; print(json.load(sys.stdin)["results"][0]["label"])')
  [ "$got" = "$want" ] || { echo "$*: \"$text\" -> $got, expected $want"; exit 1; }
}
# is_mean_of MEAN A B: every tensor of the safetensors file MEAN is the mean of
# A's and B's (float32, to 1e-6), and A and B differ.
is_mean_of() {
  python3 - "$@" <<'PY'
import json, struct, sys
def weights(path):
    raw = open(path, "rb").read()
    size = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + size]), raw[8 + size:]
    return {name: struct.unpack("<%df" % ((t["data_offsets"][1] - t["data_offsets"][0]) // 4),
                                data[t["data_offsets"][0]:t["data_offsets"][1]])
            for name, t in header.items() if name != "__metadata__"}
mean, a, b = (weights(path) for path in sys.argv[1:])
assert a.keys() == b.keys() == mean.keys(), (sorted(a), sorted(mean))
assert a != b, "the members are the same"
worst = max(abs((x + y) / 2 - m) for k in mean for x, y, m in zip(a[k], b[k], mean[k]))
assert worst <= 1e-6, worst
PY
}
# Separable rows: every math text is "solve the equation number N", every law
# text asks whether contract N is legally binding; they share no word but the
# number. A model trained on them answers "solve the equation number 9" with
# math and "is contract 9 legally binding" with law (by margins of 0.99 or
# more over seeds), so the answers are asserted, not only their form.
for i in 1 2 3 4 5 6; do
  echo "{\"text\": \"solve the equation number $i\", \"label\": \"math\", \"source\": \"exam\"}"
  echo "{\"text\": \"Read the contract. Is contract $i legally binding\", \"label\": \"law\", \"source\": \"exam\"}"
done > "$work/seq.jsonl"
for i in 7 8; do  # a source no model trains on: scored apart
  echo "{\"text\": \"what solves equation $i\", \"label\": \"math\", \"source\": \"chat\"}"
  echo "{\"text\": \"can contract $i be broken\", \"label\": \"law\", \"source\": \"chat\"}"
done >> "$work/seq.jsonl"
for name in Ann Bob Cleo Dan Eve Finn; do
  text="write to $name at $name@example.com today"
  start=9; end=$((start + ${#name}))
  estart=$((end + 4)); eend=$((estart + ${#name} + 12))
  echo "{\"text\": \"$text\", \"spans\": [{\"start\": $start, \"end\": $end, \"label\": \"PERSON\"}, {\"start\": $estart, \"end\": $eend, \"label\": \"EMAIL\"}]}"
done > "$work/tok.jsonl"
common=(--max-steps 12 --batch-size 4 --valid 0.2 --test 0.2 --lr 3e-3)

"$cli" train --task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/seq.jsonl" --out "$work/seq" \
  "${common[@]}" --hold-out source=chat --final-sentences 3 --alarm-label law --json > "$work/seq.json"
grep -q '"labels": \[' "$work/seq.json"
grep -q '"baseline"' "$work/seq.json"
# Scored through the inference path: temperature fitted on validation and
# saved with the model, an alarm threshold, the held-out source apart.
python3 - "$work/seq" <<'PY' || { echo "evaluation.json / config.json lack the calibration"; exit 1; }
import json, sys
e = json.load(open(sys.argv[1] + "/evaluation.json"))
assert e["temperature"] > 0 and e["alarm"]["label"] == "law", e
assert e["parts"]["out_of_source"]["chat"]["examples"] == 4, e["parts"]
assert "recall" in e["parts"]["test"]["all"]["alarm"] and "ece_scaled" in e["parts"]["validation"]["all"], e
assert json.load(open(sys.argv[1] + "/config.json"))["semroute_temperature"] == round(e["temperature"], 4)
s = json.load(open(sys.argv[1] + "/training_summary.json"))
assert s["examples"]["train"] > 8 and "out_of_source" in s, s["examples"]  # + final sentences; the held-out source scored
assert s["machine"]["device"] == "cpu" and s["machine"]["threads"] >= 1 and "(" in s["machine"]["cpu"], s["machine"]
PY
"$cli" calibrate "$work/seq" --alarm-label law --max-false-alarms 0.5 > "$work/cal.txt"
grep -q "alarm 'law' at" "$work/cal.txt" && grep -q "out_of_source  chat" "$work/cal.txt" ||
  { echo "semroute calibrate: $(cat "$work/cal.txt")"; exit 1; }
label_is math "solve the equation number 9" "$work/seq"

"$cli" train --task sequence --base "$work/seq" --lora 4 --data "$work/seq.jsonl" --out "$work/adapter" \
  "${common[@]}" > "$work/adapter.txt"
grep -q "test_by_length" "$work/seq/training_summary.json"
grep -q "PEFT LoRA adapter" "$work/adapter.txt"
test -f "$work/adapter/adapter_config.json" -a -f "$work/adapter/adapter_model.safetensors"
merged=$("$cli" classify "$work/seq" "is contract 9 legally binding" --adapter "$work/adapter" --json)
unmerged=$("$cli" classify "$work/seq" "is contract 9 legally binding" --adapter "$work/adapter" --unmerged --json)
# The same answer to float rounding (merged weights round differently from a delta added at run time).
python3 - "$merged" "$unmerged" <<'PY' || { echo "merged and unmerged answers differ"; exit 1; }
import json, sys
a, b = (json.loads(x)["results"][0] for x in sys.argv[1:])
assert a["label"] == b["label"] == "law", (a, b)
assert all(abs(a["probabilities"][k] - b["probabilities"][k]) <= 1e-5 for k in a["probabilities"]), (a, b)
PY

"$cli" train --task token --preset tiny --tokenizer "$tokenizer" --data "$work/tok.jsonl" --out "$work/tok" \
  "${common[@]}" > "$work/tok.txt"
grep -q "entity F1" "$work/tok.txt"
grep -q '"B-EMAIL"' "$work/tok/config.json"
grep -q '"extra_types_per_text"' "$work/tok/evaluation.json"
# Spans read word by word unless told otherwise; the entity threshold picked on validation.
grep -q '"semroute_entity_aggregation": "word"' "$work/tok/config.json"
grep -q '"entity_threshold_rule": "best validation span F1"' "$work/tok/evaluation.json"
"$cli" tokens "$work/tok" "write to Gil at gil@example.com" --json > /dev/null
"$cli" calibrate "$work/tok" --entity-threshold 0.9 | grep -q "entity threshold 0.90 (given)"
if "$cli" train --task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/seq.jsonl" --out "$work/x" \
  --entity-aggregation word 2> "$work/err"; then
  echo "--entity-aggregation was accepted for a sequence task"; exit 1
fi
grep -q "entity-aggregation applies to token tasks" "$work/err"

# Checkpoints: a second run of the same command goes on from the first one's
# last checkpoint (here: its end) and writes the same weights.
ckpt=(--task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/seq.jsonl" "${common[@]}"
  --checkpoint-dir "$work/ckpt" --checkpoint-every 4 --json)
"$cli" train "${ckpt[@]}" --out "$work/c1" > "$work/c1.json"
test -f "$work/ckpt/checkpoint.pt"
"$cli" train "${ckpt[@]}" --out "$work/c2" > "$work/c2.json"
grep -q '"resumed_at_step": ' "$work/c2.json" || { echo "the second run did not resume: $(head -c 400 "$work/c2.json")"; exit 1; }
cmp "$work/c1/model.safetensors" "$work/c2/model.safetensors" || { echo "a resumed run wrote other weights"; exit 1; }
if "$cli" train "${ckpt[@]}" --lr 1e-3 --out "$work/c3" 2> "$work/err" > /dev/null; then
  echo "a checkpoint of another run was used"; exit 1
fi
grep -q "is of another run" "$work/err"
# Averaging (a model soup): runs that differ in --order-seed share the split
# and the starting weights; their mean is one model, rescored and calibrated,
# and so is the mean of two adapters.
"$cli" train --task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/seq.jsonl" "${common[@]}" \
  --order-seed 2 --out "$work/o2" > /dev/null
if cmp -s "$work/c1/model.safetensors" "$work/o2/model.safetensors"; then echo "--order-seed changed nothing"; exit 1; fi
"$cli" average --out "$work/soup" "$work/c1" "$work/o2" > "$work/soup.txt"
grep -q "averaged 2 models" "$work/soup.txt"
is_mean_of "$work/soup/model.safetensors" "$work/c1/model.safetensors" "$work/o2/model.safetensors" ||
  { echo "the average is not the mean of the weights"; exit 1; }
python3 - "$work/soup" <<'PY' || { echo "the average was not rescored and calibrated"; exit 1; }
import json, sys
s = json.load(open(sys.argv[1] + "/training_summary.json"))
assert len(s["training"]["averaged_from"]) == 2 and "accuracy" in s["test"], s["training"]
assert json.load(open(sys.argv[1] + "/evaluation.json"))["temperature"] > 0
PY
label_is math "solve the equation number 9" "$work/soup"
"$cli" train --task sequence --base "$work/seq" --lora 4 --data "$work/seq.jsonl" --out "$work/adapter2" \
  "${common[@]}" --order-seed 2 > /dev/null
# (written a level deeper: the mean names its base from where it lies)
"$cli" average --out "$work/soups/adapter" "$work/adapter" "$work/adapter2" > /dev/null
grep -q '"base_model_name_or_path": "../../seq"' "$work/soups/adapter/adapter_config.json"
# Each factor is averaged apart (lora_A with lora_A, lora_B with lora_B), the head with the head.
is_mean_of "$work/soups/adapter/adapter_model.safetensors" "$work/adapter/adapter_model.safetensors" \
  "$work/adapter2/adapter_model.safetensors" || { echo "the averaged adapter is not the mean of the adapters"; exit 1; }
label_is law "is contract 9 legally binding" "$work/seq" --adapter "$work/soups/adapter"
if "$cli" average --out "$work/x" "$work/c1" "$work/seq" 2> "$work/err"; then
  echo "models of other splits were averaged"; exit 1
fi
grep -q "only runs from the same start on the same split can be averaged" "$work/err"
if "$cli" average --out "$work/x" "$work/c1" 2> "$work/err"; then echo "one model was averaged"; exit 1; fi
grep -q "usage: semroute average" "$work/err"
# Mixed precision (where the CPU multiplies bfloat16; refused elsewhere) is
# another run: a float32 run's checkpoint does not go on in it.
if "$cli" train "${ckpt[@]}" --compute-dtype bfloat16 --out "$work/c4" 2> "$work/err" > /dev/null; then
  echo "a float32 run's checkpoint went on in bfloat16"; exit 1
fi
if grep -q "is of another run" "$work/err"; then
  "$cli" train --task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/seq.jsonl" --out "$work/bf16" \
    "${common[@]}" --compute-dtype bfloat16 --json > "$work/bf16.json" 2> /dev/null
  grep -q '"compute-dtype": "bfloat16"' "$work/bf16.json"
  label_is math "solve the equation number 9" "$work/bf16"
else
  grep -q "bfloat16 products need a CPU with AVX-512 BF16 or AMX" "$work/err"
fi
if "$cli" train --task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/seq.jsonl" --out "$work/x" \
  --compute-dtype float16 2> "$work/err"; then
  echo "--compute-dtype float16 was accepted"; exit 1
fi
grep -q "compute-dtype must be float32 or bfloat16" "$work/err"

# Bad input is an error with a reason, not a crash.
echo '{"text": 5}' > "$work/bad.jsonl"
if "$cli" train --task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/bad.jsonl" --out "$work/x" 2> "$work/err"; then
  echo "a malformed row was accepted"; exit 1
fi
grep -q 'bad.jsonl:1: "text" must be a string' "$work/err"
if "$cli" train --task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/seq.jsonl" --out "$work/x" \
  --device gpu 2> "$work/err"; then
  echo "--device gpu was accepted"; exit 1
fi
grep -q "unknown device 'gpu'" "$work/err"
# CUDA where this libtorch has none: refused with the reason (a CUDA build trains).
"$cli" train --task sequence --preset tiny --tokenizer "$tokenizer" --data "$work/seq.jsonl" --out "$work/x" \
  "${common[@]}" --device cuda > /dev/null 2> "$work/err" || grep -q "this libtorch has no CUDA" "$work/err"
echo "train smoke: ok"

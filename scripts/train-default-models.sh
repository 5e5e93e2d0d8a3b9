#!/usr/bin/env bash
# Trains semroute's default models from the licensed data in shared/data
# (its textbook corpus included), WordNet and Faker (apt-get install
# wordnet-base python3-fake-factory) (see models/README.md): a vocabulary
# trimmed to the training texts, a ModernBERT "small" encoder pretrained on
# them (masked LM), its pretraining continued on the textbooks (one epoch,
# 3,302 steps: 53 min on 2 cores of a Xeon with AMX in bfloat16), and from it a
# domain classifier, a jailbreak classifier, a PII token classifier, and the
# multi-task set (the encoder + three LoRA adapters). Deterministic: seed 1,
# and a text's split (80 % train, 10 % validation, 10 % test) follows from
# the text alone. The masked-LM pretraining (10,994 steps of 64 texts) takes
# about 5 minutes on one GPU (SEMROUTE_TRAIN_DEVICE=cuda, a semroute built
# against a CUDA libtorch: docs/building.md) or about 4 hours on 2 cores; the
# fine-tuning after it about 1 h 11 min on 2 cores (each model card: its minutes).
# Resumable: every training step checkpoints into $work/checkpoints (each
# epoch and every 200 steps); run the script again after a stop and each
# step goes on from its last checkpoint (finished ones return at once).
# Delete that directory to train from scratch after changing data or options.
# SEMROUTE_TRAIN_STOP_AFTER=base stops after the pretraining (with
# SEMROUTE_TRAIN_DEVICE=cuda: all a short GPU loan needs to do).
#   scripts/train-default-models.sh [DATA_DIR] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data}
out=${2:-models}
work=${SEMROUTE_TRAIN_WORK:-build/default-models}
extra=(${SEMROUTE_TRAIN_EXTRA:-})  # e.g. "--max-steps 3" for a smoke run
cli=${SEMROUTE_CLI:-./build/cli/semroute}  # a copy keeps a long run safe from rebuilds
pretrain_device=(--device "${SEMROUTE_TRAIN_DEVICE:-cpu}")  # cuda: the pretraining on a GPU
# bfloat16: mixed precision, 1.1-1.4x faster on a CPU with AVX-512 BF16 or
# AMX (a pretraining step 1.6x, with the training's tensor cache;
# docs/training.md), at the cost of other weights than the shipped ones.
[ -z "${SEMROUTE_TRAIN_COMPUTE_DTYPE:-}" ] || extra+=(--compute-dtype "$SEMROUTE_TRAIN_COMPUTE_DTYPE")
domain=$data/domain/mmlu_pro.jsonl,$data/domain/mmlu.jsonl,$data/domain/medquad_health.jsonl
jailbreak=$data/jailbreak/prompts.jsonl,$data/jailbreak/safety_ext.jsonl
# Everyday-phrased harmful questions, role-play and injection attacks, real
# users' benign prompts (no HarmBench or Do-Not-Answer rows): read from the
# corpus stage of the pretraining on.
jailbreak_plain=$data/jailbreak/safety_ext2.jsonl
pii=$data/pii/presidio_synth_v2.jsonl,$data/pii/presidio_generated_large.jsonl
# Whole sources the models do not train on, scored apart in the cards (out
# of source): self-instruct's everyday instructions, HarmBench's harmful
# requests, Do-Not-Answer's harmful asks, a tenth of the PII templates.
# The domain classifier holds out a book per category (below); its second
# out-of-source check is the same recipe with MedQuAD's consumer health
# questions held out too (the last step). The vocabulary and
# the masked-LM pretraining leave MedQuAD, XSTest, HarmBench and the PII
# templates out (they read self-instruct's texts, without labels).
held_out_jailbreak=(--hold-out source=self-instruct,source=harmbench,source=do-not-answer)
held_out_pii=(--hold-out-share template_id=0.1)
held_out_all=(--hold-out source=medquad,source=xstest,source=harmbench --hold-out-share template_id=0.1)
mkdir -p "$work" "$out/multitask"
log() { echo "== $(date +%T) $*"; }
checkpoints() { echo "--checkpoint-dir $work/checkpoints/$1 --checkpoint-every 200"; }

# WordNet (Debian's wordnet-base): every definition as pretraining text, and
# short domain questions from its topic links (scripts/wordnet-data.py).
log "WordNet texts"
python3 scripts/wordnet-data.py "$work/wordnet" > "$work/wordnet.json"
glosses=$work/wordnet/glosses.jsonl
domain=$domain,$work/wordnet/questions.jsonl
# Do-Not-Answer's harmful asks open like everyday ones ("Can you …", "How
# can I …"); WordNet's everyday requests open the same way, labelled benign,
# and its everyday instructions ("Rewrite this sentence …", "Act as …") are
# framed as jailbreak templates are. HarmfulQA and CatQA open ~1 000
# harmful questions with "How can I …": WordNet's everyday "how can I"
# requests (hobbies, household things) keep the opening from deciding.
jailbreak_train=$jailbreak,$jailbreak_plain,$work/wordnet/requests.jsonl,$work/wordnet/instructions.jsonl
jailbreak_train=$jailbreak_train,$work/wordnet/howto.jsonl
# presidio's samples come from ~200 templates; sentences of the project's own
# (106 carrier phrases; names, places and companies from Faker and WordNet,
# values in many formats; WordNet's usage examples as entity-free text)
# widen them.
python3 scripts/pii-data.py "$work/wordnet/pii.jsonl" > "$work/pii-data.json"
pii_train=$pii,$work/wordnet/pii.jsonl

log "vocabulary"
$cli trim-vocab --tokenizer tests/data/tokenizers/modernbert/tokenizer.json \
  --data "$domain,$jailbreak,$pii,$glosses" "${held_out_all[@]}" --size 16384 --out "$work/tokenizer.json"

# 10,994 steps (14.6 epochs), the learning rate decaying to zero at the last.
# A finished stage is kept (its summary beside it): the first may come from
# a GPU (delete $work/base-wordnet and $out/multitask/base after changing
# the data or options).
log "masked-LM pretraining"
base_wordnet=$work/base-wordnet
[ -f "$base_wordnet/training_summary.json" ] || $cli train --task mlm --preset small --tokenizer "$work/tokenizer.json" \
  --data "$domain,$jailbreak,$pii,$glosses" "${held_out_all[@]}" --out "$base_wordnet" --epochs 15 --max-steps 10994 \
  --lr 1e-3 --batch-size 64 --max-length 128 --save-dtype float16 "${pretrain_device[@]}" \
  $(checkpoints base) "${extra[@]}" --json > "$work/base.json"

# The textbook corpus (scripts/corpus-data.py; never copied into the
# repository): its paragraphs, cut into 128-token rows, continue the
# pretraining beside the first stage's texts, one epoch, the learning rate
# decaying to zero. Its held-out books stay out of it.
log "textbook corpus"
python3 scripts/corpus-data.py "$work/corpus" --corpus "$data/corpus" --licences "$out/LICENSES" > "$work/corpus.json"
log "masked-LM pretraining, continued on the textbook corpus"
base=$out/multitask/base
[ -f "$work/base-corpus/training_summary.json" ] || $cli train --task mlm --base "$base_wordnet" \
  --data "$work/corpus/pretrain.jsonl,$domain,$jailbreak,$jailbreak_plain,$pii,$glosses" "${held_out_all[@]}" --out "$work/base-corpus" \
  --epochs 1 --lr 5e-4 --batch-size 64 --max-length 128 --save-dtype float16 "${pretrain_device[@]}" \
  $(checkpoints base-corpus) "${extra[@]}" --json > "$work/base-corpus.json"
mkdir -p "$base" && cp "$work/base-corpus"/* "$base"/
cp "$base_wordnet/training_summary.json" "$base/pretraining_stage1.json"  # the card describes both stages
# A GPU lent for minutes: stop here, carry $work/base-* to the CPU machine, run again there.
[ "${SEMROUTE_TRAIN_STOP_AFTER:-}" != base ] || { log "stopped after the pretraining: $base"; exit 0; }

# SEMROUTE_TRAIN_STEPS="domain jailbreak" runs only those fine-tuning steps
# (names as logged: domain, domain-adapter, …, domain-check), e.g. to see a
# task's scores before spending the hours the rest takes.
wanted() { [ -z "${SEMROUTE_TRAIN_STEPS:-}" ] || [[ " $SEMROUTE_TRAIN_STEPS " == *" $1 "* ]]; }

# Each task fine-tuned fully, then as a LoRA adapter on the shared encoder.
train_task() {  # NAME TASK DATA [OPTIONS…]
  local name=$1 task=$2 files=$3
  shift 3
  if wanted "$name"; then
    log "$name"
    $cli train --task "$task" --base "$base" --data "$files" --out "$out/$name" --save-dtype float16 \
      --lr 3e-4 $(checkpoints "$name") "$@" "${extra[@]}" --json > "$work/$name.json"
  fi
  if wanted "$name-adapter"; then
    log "$name adapter"
    $cli train --task "$task" --base "$base" --data "$files" --out "$out/multitask/$name" --lora 16 \
      --lr 1e-3 $(checkpoints "$name-adapter") "$@" "${extra[@]}" --json > "$work/$name-adapter.json"
  fi
}
# Users ask short questions; exam items are long: the final sentence of every
# multi-sentence item is a training example too. The books add weakly
# labelled examples (at most 3,000 a category: glossary terms and section
# titles as questions, short exercises, single sentences); one book (or
# every seventh chapter of the only one) per category is held out whole
# and scored apart, a category each (corpus-held-out:<category>).
domain_options=(--final-sentences 4 --epochs 3 --batch-size 32 --max-length 128)
domain_books=$domain,$work/corpus/domain.jsonl,$work/corpus/held_out.jsonl
held_out_books=$(python3 -c 'import json, sys
print(",".join("source=corpus-held-out:" + c for c in json.load(open(sys.argv[1]))["held_out"]))' "$work/corpus.json")
train_task domain sequence "$domain_books" --hold-out "$held_out_books" "${domain_options[@]}"
# Jailbreaks are long and benign prompts short: random windows of the
# training prompts keep the length from deciding (see models/README.md).
# The router's alarm threshold: the most recall with at most 1 % false
# alarms on the validation prompts (evaluation.json; models/router.yaml).
# Validation holds XSTest's safe prompts that read as unsafe ("how do I kill
# a Python process"): at 0.5 % they alone set the threshold (0.96) and
# HarmBench's recall fell to 0.46; at 1 % it is 0.63 with 4.2 % false
# alarms on Self-Instruct (the corpus encoder's model, models/README.md).
train_task jailbreak sequence "$jailbreak_train" "${held_out_jailbreak[@]}" --epochs 4 --batch-size 32 --max-length 128 \
  --random-windows 2 --alarm-label jailbreak --max-false-alarms 0.01
train_task pii token "$pii_train" "${held_out_pii[@]}" --epochs 8 --batch-size 16 --max-length 128 \
  --map-labels ADDRESS=STREET_ADDRESS,LOCATION=GPE

check=$work/checks/domain-medquad-held-out
wanted domain-check || { log "done (steps: $SEMROUTE_TRAIN_STEPS): $out"; exit 0; }
log "domain, MedQuAD held out (the out-of-source check of the domain recipe)"
[ -f "$check/evaluation.json" ] || $cli train --task sequence --base "$base" --data "$domain_books" \
  --hold-out "source=medquad,$held_out_books" \
  --out "$check" --lr 3e-4 $(checkpoints domain-check) "${domain_options[@]}" "${extra[@]}" --json > "$work/domain-check.json"
python3 scripts/model-cards.py "$out" "$work/checks"
log "done: $out"

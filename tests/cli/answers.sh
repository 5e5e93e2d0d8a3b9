#!/usr/bin/env bash
# `semroute compress` and `semroute check-answer` end to end: the budget and
# the kept ranges, an SSE stream on stdin cut into pieces as it arrives,
# plain text, malformed SSE, exit codes.
set -uo pipefail
cli=$1 models=$2 tokenizer=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Answers of two processes are compared byte for byte below: pin the GEMM
# engines (chosen per shape by a load-time measurement, which a close call
# could tip either way; the two round differently in the last bits).
export SEMROUTE_F32_GEMM=own SEMROUTE_INT8_GEMM=own

# compress: a long prompt of our own within 48 tokens of the domain model's tokenizer.
{ echo "Please review the incident report below."
  for i in $(seq 1 300); do echo "The system worked as expected during interval $((i % 7))."; done
  echo "At 03:12 the primary database in Frankfurt lost quorum after a kernel panic."
  for i in $(seq 1 300); do echo "The system worked as expected during interval $((i % 7))."; done
  echo "What was the root cause?"; } >"$tmp/prompt.txt"
"$cli" compress "$tmp/prompt.txt" --max-tokens 48 --tokenizer "$models/domain" --json >"$tmp/c.json" ||
  fail "compress failed"
python3 - "$tmp/prompt.txt" "$tmp/c.json" "$models/domain" <<'PY' || fail "compress output is wrong: $(cat "$tmp/c.json")"
import json, sys
text = open(sys.argv[1], "rb").read()
c = json.load(open(sys.argv[2]))
assert c["compressed"] and c["tokens"] <= 48, c
assert c["text"].startswith("Please review the incident report below."), c["text"]
assert c["text"].endswith("What was the root cause?"), c["text"]
assert "Frankfurt lost quorum" in c["text"], c["text"]
# the kept ranges, joined as documented, are the skeleton
out = b""
for i, (b, e) in enumerate(c["ranges"]):
    if i:
        gap = text[c["ranges"][i - 1][1]:b]
        out += (b"\n" if b"\n" in gap else b" ") if gap else b""
    out += text[b:e]
assert out.decode() == c["text"], (out, c["text"])
PY
printf 'bad \xff text' | "$cli" compress - 2>"$tmp/err"; [ $? -eq 1 ] || fail "invalid UTF-8 must exit 1"
grep -q "invalid UTF-8" "$tmp/err" || fail "the error must name invalid UTF-8: $(cat "$tmp/err")"

# check-answer: a tiny random detector; the SSE stream arrives in pieces.
"$cli" make-model tiny "$tmp/detector" --token-labels SUPPORTED,HALLUCINATED --tokenizer "$tokenizer" >/dev/null ||
  fail "make-model failed"
echo "The Eiffel Tower is in Paris. It was completed in 1889." >"$tmp/context.txt"
sse() {
  printf ': keep-alive\n\n'
  printf 'data: {"choices":[{"delta":{"role":"assistant"}}]}\r\n\r\n'
  printf 'data: {"choices":[{"delta":{"content":"It was finished "}}]}\n\n'; sleep 0.2
  printf 'data: {"choices":[{"delta":{"content":"in 1889. It is made"}}]}\n\n'; sleep 0.2
  printf 'data: {"choices":[{"delta":{"content":" of cheese!"}}]}\n\ndata: [DONE]\n\n'
}
sse | "$cli" check-answer "$tmp/detector" --context "$tmp/context.txt" --question "When was it built?" --json \
  >"$tmp/events.jsonl"
code=$?
[ $code -eq 0 ] || [ $code -eq 3 ] || fail "check-answer failed ($code)"
[ "$(wc -l <"$tmp/events.jsonl")" -eq 2 ] || fail "expected one event per sentence: $(cat "$tmp/events.jsonl")"
sed -n 1p "$tmp/events.jsonl" | grep -q '"text":"It was finished in 1889."' || fail "first sentence: $(cat "$tmp/events.jsonl")"
sed -n 2p "$tmp/events.jsonl" | grep -q '"begin":25,"end":46' || fail "second sentence offsets: $(cat "$tmp/events.jsonl")"
# The same answer as plain text gives the same events.
printf 'It was finished in 1889. It is made of cheese!' |
  "$cli" check-answer "$tmp/detector" --context "$tmp/context.txt" --question "When was it built?" --json \
  >"$tmp/text.jsonl"
diff <(sed 's/"latency_ms":[0-9.e-]*//' "$tmp/events.jsonl") <(sed 's/"latency_ms":[0-9.e-]*//' "$tmp/text.jsonl") ||
  fail "plain text and SSE disagree"
printf 'data: {"choices": oops}\n\n' | "$cli" check-answer "$tmp/detector" --context "$tmp/context.txt" 2>"$tmp/err"
[ $? -eq 1 ] || fail "malformed SSE must exit 1"
grep -q "SSE event 1: the data is not JSON" "$tmp/err" || fail "the error must name the event: $(cat "$tmp/err")"
"$cli" check-answer "$tmp/detector" 2>/dev/null; [ $? -eq 2 ] || fail "a missing --context must exit 2"
echo "answers: ok"

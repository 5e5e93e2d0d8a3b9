#!/usr/bin/env bash
# CLI input conventions: `--` ends the options (texts may start with '-'),
# `-` and `--input FILE` stream texts (plain lines or JSONL) to JSONL answers,
# a bad line gets an error line of its own and exit code 1, usage errors 2;
# --head binds a head to a model's encoder; rerank orders documents.
set -uo pipefail
cli=$1 models=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Answers of two processes are compared byte for byte below: pin the GEMM
# engines (chosen per shape by a load-time measurement, which a close call
# could tip either way; the two round differently in the last bits).
export SEMROUTE_F32_GEMM=own SEMROUTE_INT8_GEMM=own

out=$("$cli" classify "$models/domain" --json -- "-x is a negative number") || fail "-- did not end the options"
grep -q '"text": "-x is a negative number"' <<<"$out" || fail "the text after -- was not classified: $out"
"$cli" classify "$models/domain" "-x is a negative number" 2>"$tmp/err"
[ $? -eq 2 ] || fail "an unknown option must exit 2"
grep -q "put -- before a text" "$tmp/err" || fail "the error must say how to pass such a text"

printf 'How do I sort a list in Python?\nWhat is the derivative of x^2?\n' | "$cli" classify "$models/domain" - >"$tmp/stdin.jsonl" ||
  fail "stdin input failed"
[ "$(wc -l <"$tmp/stdin.jsonl")" -eq 2 ] || fail "expected 2 JSON lines from stdin: $(cat "$tmp/stdin.jsonl")"
grep -q '"line":2' "$tmp/stdin.jsonl" || fail "answers must carry their line numbers"

{ printf '{"text": "Is a verbal contract binding?"}\n'; printf 'bad \xff byte\n'; printf '{"other": 1}\n'
  for i in $(seq 1 70); do echo "text number $i"; done; } >"$tmp/in.txt"
"$cli" tokens "$models/pii" --input "$tmp/in.txt" >"$tmp/tokens.jsonl"
[ $? -eq 1 ] || fail "a file with bad lines must exit 1"
[ "$(wc -l <"$tmp/tokens.jsonl")" -eq 73 ] || fail "expected one JSON line per input line (73)"
[ "$(grep -c '"error"' "$tmp/tokens.jsonl")" -eq 2 ] || fail "expected 2 error lines"
sed -n 2p "$tmp/tokens.jsonl" | grep -q '"line":2.*\|"error".*not valid UTF-8' || fail "line 2 must report invalid UTF-8"
sed -n 73p "$tmp/tokens.jsonl" | grep -q '"line":73' || fail "the answers must keep the input order"

printf 'first\nsecond\n' | "$cli" embed "$models/multitask/base" - | grep -c '"embedding"' | grep -qx 2 ||
  fail "embed must stream one embedding per line"
# A multi-label head (config.json problem_type) is marked in the JSON; its
# scores are sigmoids, which need not sum to 1.
mkdir "$tmp/multi" && cp "$models/domain"/* "$tmp/multi/"
python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['problem_type']='multi_label_classification'; json.dump(c,open(p,'w'))" \
  "$tmp/multi/config.json"
"$cli" classify "$tmp/multi" --json "Is a verbal contract binding?" >"$tmp/multi.json" || fail "multi-label classify failed"
python3 - "$tmp/multi.json" <<'PY' || fail "multi-label JSON: $(cat "$tmp/multi.json")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["multi_label"] is True
scores = r["probabilities"].values()
assert all(0 <= s <= 1 for s in scores) and abs(sum(scores) - 1) > 1e-3, scores
assert r["confidence"] == max(scores)
PY
"$cli" classify "$models/domain" --json "Is a verbal contract binding?" | grep -q multi_label &&
  fail "a softmax classifier must not be marked multi_label"
# A long document window by window: the first window starts at its start,
# the last ends at its end, consecutive ones share the overlap.
doc=$(for i in $(seq 1 20); do printf 'The tenant asked whether the contract binds the landlord. '; done)
"$cli" classify "$models/domain" --window-size 64 --overlap 8 "$doc" >"$tmp/windows.json" || fail "--windows failed"
python3 - "$tmp/windows.json" <<'PY' || fail "windows JSON: $(cat "$tmp/windows.json")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
w = r["windows"]
assert len(w) > 2 and w[0]["token_begin"] == 0 and w[-1]["token_end"] == r["content_tokens"]
assert all(b["token_begin"] == a["token_end"] - 8 for a, b in zip(w, w[1:]))
assert all(x["text"] == r["text"][x["begin"]:x["end"]] for x in w)
PY
"$cli" tokens "$models/pii" --window-size 24 --overlap 6 "Mail ana@example.com. $doc" >"$tmp/tokwin.json" ||
  fail "tokens --windows failed"
python3 - "$tmp/tokwin.json" <<'PY' || fail "token windows JSON: $(head -c 600 "$tmp/tokwin.json")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert len(r["windows"]) > 2 and r["windows"][-1][1] == r["content_tokens"] == len(r["tokens"])
text = r["text"].encode()
assert all(text[e["begin"]:e["end"]].decode() == e["text"] for e in r["entities"])
PY
"$cli" classify "$models/domain" --max-document-tokens 10 "$doc" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "never cut a document" "$tmp/err" || fail "a document over --max-document-tokens must be refused"
# --head: the domain head bound to the domain encoder answers as the whole model;
# the PII head on the same encoder is a token classifier with its own labels.
q="Can my landlord keep the deposit?"
[ "$("$cli" classify "$models/domain" --head "$models/domain" --json "$q")" = "$("$cli" classify "$models/domain" --json "$q")" ] ||
  fail "a head bound to its own encoder must answer as the whole model"
"$cli" tokens "$models/domain" --head "$models/pii" --json "Mail ana@example.com" >"$tmp/bound.json" ||
  fail "tokens --head failed"
grep -q '"tokens"' "$tmp/bound.json" || fail "tokens --head: $(cat "$tmp/bound.json")"
"$cli" classify "$models/domain" --head "$models/pii" "$q" 2>"$tmp/err"
[ $? -eq 1 ] || fail "a token head is not a sequence head: $(cat "$tmp/err")"
# embed --json says what each text was.
"$cli" embed "$models/domain" --max-length 8 --json "short" "a longer text that the model cuts at eight tokens" \
  >"$tmp/embed.json" || fail "embed failed"
python3 - "$tmp/embed.json" <<'PY' || fail "embed inputs: $(head -c 400 "$tmp/embed.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert [i["truncated"] for i in r["inputs"]] == [False, True] and r["inputs"][1]["processed_tokens"] == 8
PY
# rerank: a random pair scorer ranks every document, highest score first.
"$cli" make-model tiny "$tmp/reranker" --pair-scorer --tokenizer "$models/domain/tokenizer.json" >/dev/null ||
  fail "make-model --pair-scorer failed"
"$cli" rerank "$tmp/reranker" "reset my password" "Open settings." "Lisbon is in Portugal." "Mail support." --json \
  >"$tmp/rerank.json" || fail "rerank failed"
python3 - "$tmp/rerank.json" <<'PY' || fail "rerank JSON: $(cat "$tmp/rerank.json")"
import json, sys
r = json.load(open(sys.argv[1]))
scores = [d["score"] for d in r["ranked"]]
assert sorted(d["index"] for d in r["ranked"]) == [0, 1, 2] and scores == sorted(scores, reverse=True)
PY
"$cli" classify "$models/domain" --input "$tmp/missing.txt" 2>/dev/null
[ $? -eq 1 ] || fail "a missing --input file must exit 1"
echo "text input: ok"

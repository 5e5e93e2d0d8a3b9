"""Vela 2.0 Span answers computed here from the documented behaviour
(docs/decisions.md), independently of the library: words and units as
Python regular expressions, each word's first token, span trimming, the
decoding of word probabilities into labelled spans, and the calibration's
span thresholds (PII length rule and buckets, sparse gate, presets).
Offsets are code points (Python string indices) throughout."""
import math
import re

import numpy as np

_CJK = (r"\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf"
        r"\uac00-\ud7af\u8c48-\ufaff\ufe30-\ufe4f\uff00-\uffef")
_URL = r"(?:https?://|www\.)"
# A URL's run less its trailing punctuation (one character kept), an e-mail address, a @handle, one CJK character,
# a word (with - or _ joints), any other character.
_WORD = re.compile(
    rf"{_URL}[^\s{_CJK}]+?(?=[.,;:!?)\]}}>\"'\u201d\u2019\u00bb]*(?:[\s{_CJK}]|\Z))"
    r"|[a-z0-9._%+\-]+@[a-z0-9.\-]+\.[a-z]{2,}"
    r"|@[a-z0-9_]+"
    rf"|[{_CJK}]"
    rf"|[^\W{_CJK}]+(?:[-_][^\W{_CJK}]+)*"
    r"|\S", re.IGNORECASE)
_STOP = "\\]\\)\\}>\u300c\u300d\u300e\u300f\"'\u201c\u201d"
# Units hold words together: a URL, a run of letters, numbers and @ . _ - +, any other character.
_UNIT = re.compile(
    rf"{_URL}[^\s{_STOP}{_CJK}]+?(?=[.,;:!?]*(?:[\s{_STOP}{_CJK}]|\Z))"
    rf"|(?:[^\W_{_CJK}]|[@._+\-])+"
    r"|\S")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
EDGE = set("[](){}<>\u300c\u300d\u300e\u300f\u3010\u3011\u300a\u300b\u3008\u3009\"'\u201c\u201d\u2018\u2019"
           "\u00ab\u00bb\u2039\u203a")


def split_words(text):
    return [m.span() for m in _WORD.finditer(text)]


def split_units(text):
    return [m.span() for m in _UNIT.finditer(text)]


def code_point_offsets(text, byte_offsets):
    """Token byte ranges as code point ranges (a token covering part of a character covers all of it)."""
    holder = []
    for i, c in enumerate(text):
        holder += [i] * len(c.encode("utf-8", "surrogatepass"))
    out = []
    for s, e in byte_offsets:
        first = holder[s] if s < len(holder) else len(text)
        out.append((first, holder[e - 1] + 1 if e > s else first))
    return out


def words_of(text, offsets):
    """Each word with the first non-empty token ending past its start; a word whose token starts at or after its
    end is dropped. ([(start, end)], [token index])."""
    words, firsts = [], []
    for a, b in split_words(text) if offsets else []:
        first = next((i for i, (s, e) in enumerate(offsets) if e > s and e > a), None)
        if first is not None and offsets[first][0] < b:
            words.append((a, b))
            firsts.append(first)
    return words, firsts


def trim(text, start, end):
    while start < end and (text[start].isspace() or text[start] in EDGE):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in EDGE):
        end -= 1
    if not re.match(_URL, text[start:], re.IGNORECASE):
        return start, end
    cjk = _CJK_CHAR.search(text, start, end)
    if cjk:
        end = cjk.start()
    while end > start and (text[end - 1] in ".,;:!?)" or text[end - 1] in EDGE or text[end - 1].isspace()):
        end -= 1
    return start, end


def decode(p, words, labels, text, threshold):
    """Labelled spans [(label, start, end, probability)] from word probabilities p (words x labels)."""
    p = np.asarray(p, np.float32).reshape(len(words), len(labels))
    if not words:
        return []
    best = p.argmax(1)
    best_p = p[np.arange(len(words)), best]
    label = [int(b) if bp > np.float32(threshold) else -1 for b, bp in zip(best, best_p)]
    if all(v < 0 for v in label):
        return []
    unit_at = [-1] * len(text)
    for u, (s, e) in enumerate(split_units(text)):
        for c in range(s, e):
            unit_at[c] = u
    unit = [unit_at[a] if a < len(text) else -1 for a, _ in words]
    i = 0
    while i < len(words):
        j = i
        while j < len(words) and unit[j] == unit[i]:
            j += 1
        members = [k for k in range(i, j) if label[k] >= 0]
        if unit[i] != -1 and members:
            votes = {}
            for k in members:
                votes[label[k]] = votes.get(label[k], 0.0) + float(best_p[k])
            winner = max(votes, key=lambda l: (votes[l], -members.index(next(m for m in members if label[m] == l))))
            for k in range(members[0], members[-1] + 1):
                label[k] = winner
        i = j
    spans, i = [], 0
    while i < len(words):
        j = i
        while j < len(words) and label[j] == label[i]:
            j += 1
        if label[i] >= 0:
            start, end = trim(text, words[i][0], words[j - 1][1])
            if start < end:
                spans.append((labels[label[i]], start, end, float(p[i:j, label[i]].mean())))
        i = j
    return spans


def threshold_for(calibration, key, labels, words, p, text, n_tokens, given):
    """The span threshold: the question's, else the PII rule (length anchors or buckets, then the sparse gate), else
    span:halu / span:toxic / span:<key> / span:*."""
    if given is not None:
        return given
    thresholds = calibration["thresholds"]
    if key == "pii" or (labels and set(labels) <= set(calibration.get("pii_types", []))):
        t = None
        if "pii_length_rule" in calibration:
            anchors = calibration["pii_length_rule"]["anchors"]
            t = math.exp(np.interp(math.log(max(n_tokens, 1)), [math.log(a["n_tokens"]) for a in anchors],
                                   [math.log(a["threshold"]) for a in anchors]))
        else:
            t = next((b["threshold"] for b in calibration["pii_buckets"] if n_tokens <= b["max_tokens"]), None)
        if t is not None:
            gate = calibration.get("pii_sparse_gate") or {}
            if gate and gate.get("K", -1) >= 0 and t < gate["t_sparse"] and words:
                if len(decode(p, words, labels, text, gate.get("probe_threshold", 0.5))) <= gate["K"]:
                    t = gate["t_sparse"]
            return t
    if key in ("halu", "toxic"):
        return thresholds["span:" + key]
    return thresholds.get("span:" + key, thresholds["span:*"])


def answer(q, words, logits, text, calibration, n_tokens, span_range=None):
    """A span question's answer: {noul, spans, threshold} (reference form)."""
    labels = list(q["criteria"])
    p = 1 / (1 + np.exp(-np.asarray(logits, np.float64).reshape(len(words), len(labels)) /
                        calibration["temperature"].get("span", 1.0)))
    key = q.get("preset") or q["id"]
    t = threshold_for(calibration, key, labels, words, p, text, n_tokens, q.get("threshold"))
    low, high = span_range or (0, len(text))
    spans = []
    for label, start, end, probability in decode(p, words, labels, text, t):
        start, end = trim(text, max(start, low), min(end, high))
        if start < end:
            spans.append({"label": label, "start": start - low, "end": end - low, "text": text[start:end],
                          "probability": probability})
    inside = [k for k, (a, b) in enumerate(words) if a >= low and b <= high]
    return {"noul": float(p[inside].max()) if inside and len(labels) else 0.0, "spans": spans, "threshold": t,
            "span": True}

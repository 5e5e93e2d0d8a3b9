#include "compression/prompt_compressor.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "compression/stop_words.h"
#include "semroute/error.h"
#include "tokenizers/tokenizer.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {


// Tokens as the budget counts them: the tokenizer's (no special tokens), or
// words, punctuation marks and CJK characters.
class TokenCount {
 public:
  explicit TokenCount(const Tokenizer* tokenizer) : tokenizer_(tokenizer) {}

  // Exact up to `limit`; limit + 1 when there are more.
  size_t count(std::string_view text, size_t limit) const {
    if (tokenizer_) return tokenizer_->encode(text, options(limit + 1, Keep::kStart)).size();
    return std::min(pieces(text, limit + 1).size(), limit + 1);
  }

  // count(), reading a long text as little as possible: a prefix ending
  // before whitespace has no more tokens than the whole text (pre-tokenizers
  // start a piece at whitespace and tokenize pieces independently), so a
  // prefix of ~8 bytes a token that is over the limit decides at once.
  size_t count_long(std::string_view text, size_t limit) const {
    if (tokenizer_ && text.size() > (limit + 1) * 8) {
      size_t cut = (limit + 1) * 8;
      while (cut > 0 && !(is_ascii_space(text[cut]) && !is_ascii_space(text[cut - 1]))) --cut;
      if (cut > 0 && count(text.substr(0, cut), limit) > limit) return limit + 1;
    }
    return count(text, limit);
  }

  // End of the longest prefix of `text` of at most n tokens, at a word's end
  // where one lies inside it (0: not even one token fits).
  size_t prefix_end(std::string_view text, size_t n) const {
    size_t end = 0;
    if (tokenizer_) {
      for (const Span& s : tokenizer_->encode(text, options(n, Keep::kStart)).offsets) end = std::max<size_t>(end, s.end);
    } else {
      const auto p = pieces(text, n);
      end = p.empty() ? 0 : p.back().end;
    }
    while (end > 0 && end < text.size() && is_utf8_continuation(text[end])) --end;  // byte-level tokens split characters
    if (end >= text.size() || is_ascii_space(text[end])) return end;
    size_t cut = end;
    while (cut > 0 && !is_ascii_space(text[cut - 1])) --cut;
    while (cut > 0 && is_ascii_space(text[cut - 1])) --cut;
    return cut > 0 ? cut : end;
  }

  // Start of the longest suffix of at most n tokens, at a word's start where
  // one lies inside it (text.size(): not even one token fits).
  size_t suffix_begin(std::string_view text, size_t n) const {
    size_t begin = text.size();
    if (tokenizer_) {
      for (const Span& s : tokenizer_->encode(text, options(n, Keep::kEnd)).offsets)
        if (s.end > s.begin) begin = std::min<size_t>(begin, s.begin);
    } else {
      const auto p = pieces(text, std::numeric_limits<size_t>::max());
      if (n > 0 && !p.empty()) begin = p[p.size() - std::min(n, p.size())].begin;
    }
    while (begin < text.size() && is_utf8_continuation(text[begin])) ++begin;
    if (begin == 0 || begin >= text.size() || is_ascii_space(text[begin - 1])) return begin;
    size_t cut = begin;
    while (cut < text.size() && !is_ascii_space(text[cut])) ++cut;
    while (cut < text.size() && is_ascii_space(text[cut])) ++cut;
    return cut < text.size() ? cut : begin;
  }

 private:
  static EncodeOptions options(size_t max_length, Keep keep) {
    EncodeOptions o;
    o.add_special_tokens = false;
    o.max_length = max_length;
    o.truncation = keep;
    return o;
  }

  // The first `limit` words / marks / CJK characters of `text`.
  static std::vector<Span> pieces(std::string_view text, size_t limit) {
    std::vector<Span> out;
    bool in_word = false;
    for (size_t pos = 0; pos < text.size() && out.size() <= limit;) {
      size_t length = 1;
      const auto c = static_cast<unsigned char>(text[pos]);
      const char32_t cp = c < 0x80 ? c : unicode::decode(text, pos, &length);
      const bool space = unicode::is_whitespace(cp);
      const bool mark = !space && (unicode::is_punctuation(cp) || unicode::is_cjk(cp));
      const auto at = static_cast<uint32_t>(pos), to = static_cast<uint32_t>(pos + length);
      if (space || mark) in_word = false;
      if (mark) {
        out.push_back({at, to});
      } else if (!space) {
        if (in_word) {
          out.back().end = to;
        } else {
          out.push_back({at, to});
          in_word = true;
        }
      }
      pos += length;
    }
    if (out.size() > limit) out.resize(limit);
    return out;
  }

  const Tokenizer* tokenizer_;
};

// One unit of the text and what the funnel made of it.
struct Unit {
  Span span;
  size_t first_word = 0, end_word = 0;  // its words in the text's word list
  std::vector<Span> pieces;             // what stage 2 keeps of it
  double score = 0;
  uint64_t signature = 0;               // of its content words: repeated units are kept once
};

// Stage 2: the runs of words that are not stop words, with the punctuation
// inside each run; the unit's own start and end stay with the first and
// last runs.
std::vector<Span> content_runs(const Unit& unit, const std::vector<Word>& words, const std::vector<uint8_t>& stop) {
  std::vector<Span> runs;
  bool open = false;
  for (size_t w = unit.first_word; w < unit.end_word; ++w) {
    if (stop[w]) {
      open = false;
      continue;
    }
    const uint32_t begin = w == unit.first_word ? unit.span.begin : words[w].begin;
    const uint32_t end = w + 1 == unit.end_word ? unit.span.end : words[w].end;
    if (open) {
      runs.back().end = end;
    } else {
      runs.push_back({begin, end});
      open = true;
    }
  }
  return runs;
}

// Stage 3: summed self-information of the unit's distinct content words over
// (their count + 2).
double information_score(const Unit& unit, const std::vector<Word>& words, const std::vector<uint8_t>& stop,
                         const std::unordered_map<uint64_t, uint32_t>& counts, double total) {
  std::vector<uint64_t> distinct;
  for (size_t w = unit.first_word; w < unit.end_word; ++w)
    if (!stop[w]) distinct.push_back(words[w].hash);
  const double content = static_cast<double>(distinct.size());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  double bits = 0;
  for (const uint64_t h : distinct) bits += std::log2(total / counts.at(h));
  return bits / (content + 2);
}

void check_options(const CompressOptions& o) {
  if (o.max_tokens == 0) throw InvalidInput("compression: max_tokens must be at least 1");
  const auto ratio_ok = [](double r) { return r >= 0 && r <= 1; };
  if (!ratio_ok(o.head_ratio) || !ratio_ok(o.tail_ratio) || o.head_ratio + o.tail_ratio > 1)
    throw InvalidInput("compression: head_ratio and tail_ratio must lie in [0, 1] and sum to at most 1");
}

}  // namespace

std::string join_kept(std::string_view original, const std::vector<Span>& kept) {
  std::string out;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i > 0 && kept[i].begin > kept[i - 1].end) {
      const std::string_view gap = original.substr(kept[i - 1].end, kept[i].begin - kept[i - 1].end);
      out += gap.find('\n') != std::string_view::npos ? '\n' : ' ';
    }
    out.append(original.substr(kept[i].begin, kept[i].end - kept[i].begin));
  }
  return out;
}

PromptCompressor::PromptCompressor(CompressOptions options, std::shared_ptr<const Tokenizer> tokenizer)
    : options_(std::move(options)), tokenizer_(std::move(tokenizer)) {
  check_options(options_);
  if (options_.languages.empty()) {
    for (const auto& list : stop_word_lists()) languages_.push_back(&list);
  } else {
    for (const auto& language : options_.languages) languages_.push_back(&stop_word_list(language));
  }
}

namespace {

std::vector<Span> sorted_by_start(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  return spans;
}

// One compression: the text cut into units and words, and the funnel's
// stages over them.
class Funnel {
 public:
  Funnel(std::string_view text, const CompressOptions& options, const TokenCount& tokens,
         const std::vector<const StopWordList*>& languages)
      : text_(text), options_(options), tokens_(tokens), budget_(options.max_tokens) {
    for (const Span& s : split_units(text, SplitterOptions{options.max_unit_bytes})) {
      Unit u;
      u.span = s;
      u.first_word = words_.size();
      scan_words(text.substr(s.begin, s.end - s.begin), s.begin, words_);
      u.end_word = words_.size();
      units_.push_back(std::move(u));
    }
    mark_stop_words(languages);
  }

  size_t units() const { return units_.size(); }
  const StopWordList* language() const { return language_; }

  // Stage 1: the first units fill the head's share of the budget, the last
  // ones the tail's (the unit at an edge is cut at a word).
  std::vector<Span> take_edges() {
    std::vector<Span> kept;
    const auto share = [&](double ratio) { return static_cast<size_t>(static_cast<double>(budget_) * ratio); };
    const size_t head = share(options_.head_ratio), tail = share(options_.tail_ratio);
    for (size_t spent = 0; head_end_ < units_.size() && spent < head;) {
      const size_t n = take_edge(head_end_++, head - spent, true, kept);
      if (n > head - spent) break;  // it was cut: the head is full
      spent += n;
    }
    tail_begin_ = units_.size();
    for (size_t spent = 0; tail_begin_ > head_end_ && spent < tail;) {
      const size_t n = take_edge(--tail_begin_, tail - spent, false, kept);
      if (n > tail - spent) break;
      spent += n;
    }
    return kept;
  }

  // Stages 2 and 3: the units between the edges, stop words dropped, the
  // most informative first.
  std::vector<size_t> rank_middle() {
    std::unordered_map<uint64_t, uint32_t> counts;
    double content_words = 0;
    for (size_t w = 0; w < words_.size(); ++w)
      if (!stop_[w]) {
        ++counts[words_[w].hash];
        ++content_words;
      }
    std::vector<size_t> middle;
    for (size_t i = head_end_; i < tail_begin_; ++i) {
      Unit& u = units_[i];
      u.pieces = language_ ? content_runs(u, words_, stop_) : std::vector<Span>{u.span};
      if (u.pieces.empty()) continue;
      u.score = information_score(u, words_, stop_, counts, std::max(content_words, 1.0));
      for (size_t w = u.first_word; w < u.end_word; ++w)
        if (!stop_[w]) u.signature = (u.signature ^ words_[w].hash) * 0x100000001b3ull;
      middle.push_back(i);
    }
    std::stable_sort(middle.begin(), middle.end(),
                     [&](size_t a, size_t b) { return units_[a].score > units_[b].score; });
    return middle;
  }

  // The best ranked units that fit beside the edges, best first; a unit
  // repeated word for word is taken once.
  std::vector<size_t> choose(const std::vector<Span>& edges, const std::vector<size_t>& ranked) const {
    size_t used = tokens_.count(join_kept(text_, sorted_by_start(edges)), budget_);
    std::vector<size_t> chosen;
    std::unordered_set<uint64_t> signatures;
    size_t rejected_in_a_row = 0;
    for (size_t m = 0; m < ranked.size() && used < budget_ && rejected_in_a_row < 64; ++m) {
      const Unit& u = units_[ranked[m]];
      if (u.signature != 0 && signatures.count(u.signature)) continue;
      const size_t n = tokens_.count(join_kept(text_, u.pieces), budget_ - used) + 1;  // +1: its separator
      if (n > budget_ - used) {
        ++rejected_in_a_row;
        continue;
      }
      used += n;
      chosen.push_back(ranked[m]);
      signatures.insert(u.signature);
      rejected_in_a_row = 0;
    }
    return chosen;
  }

  // The skeleton, checked as a whole: joining can merge tokens differently,
  // so the least informative chosen units go until it fits; if the edges
  // alone do not, their first `budget` tokens stay.
  void assemble(std::vector<Span> edges, std::vector<size_t> chosen, CompressedText& out) const {
    for (;;) {
      std::vector<Span> all = edges;
      for (const size_t u : chosen) all.insert(all.end(), units_[u].pieces.begin(), units_[u].pieces.end());
      all = sorted_by_start(std::move(all));
      out.text = join_kept(text_, all);
      out.tokens = tokens_.count(out.text, budget_);
      if (out.tokens <= budget_ || all.empty()) {
        out.kept = std::move(all);
        break;
      }
      if (!chosen.empty()) {
        chosen.pop_back();
        continue;
      }
      edges = first_tokens(all, out.text);
      if (edges.empty()) {  // not even one token fits: an empty skeleton
        out.text.clear();
        out.kept.clear();
        out.tokens = 0;
        break;
      }
    }
    out.units_kept = units_touched(out.kept);
  }

 private:
  void mark_stop_words(const std::vector<const StopWordList*>& languages) {
    stop_.assign(words_.size(), 0);
    if (!options_.drop_stop_words) return;
    std::vector<uint64_t> sample;  // the first 2000 words tell the language
    for (size_t w = 0; w < std::min<size_t>(words_.size(), 2000); ++w) sample.push_back(words_[w].hash);
    language_ = guess_language(sample, languages);
    if (!language_) return;
    for (size_t w = 0; w < words_.size(); ++w) stop_[w] = language_->words.count(words_[w].hash) != 0;
  }

  // Keeps unit `index` (or the part of it within `allowance` tokens, from
  // its start or end); returns its tokens, allowance + 1 when it was cut.
  size_t take_edge(size_t index, size_t allowance, bool from_start, std::vector<Span>& kept) const {
    const Span s = units_[index].span;
    const std::string_view unit = text_.substr(s.begin, s.end - s.begin);
    const size_t n = tokens_.count(unit, allowance);
    if (n <= allowance) {
      kept.push_back(s);
      return n;
    }
    const size_t cut = from_start ? tokens_.prefix_end(unit, allowance) : tokens_.suffix_begin(unit, allowance);
    const Span part = from_start ? Span{s.begin, static_cast<uint32_t>(s.begin + cut)}
                                 : Span{static_cast<uint32_t>(s.begin + cut), s.end};
    if (part.end > part.begin) kept.push_back(part);
    return allowance + 1;
  }

  // The ranges of `all` (joined as `joined`) cut to its first `budget` tokens.
  std::vector<Span> first_tokens(const std::vector<Span>& all, const std::string& joined) const {
    const size_t end = tokens_.prefix_end(joined, budget_);
    std::vector<Span> cut;
    size_t at = 0;  // position in `joined`
    for (size_t i = 0; i < all.size() && at < end; ++i) {
      if (i > 0 && all[i].begin > all[i - 1].end) ++at;  // the separator
      const size_t length = all[i].end - all[i].begin;
      cut.push_back({all[i].begin, static_cast<uint32_t>(all[i].begin + std::min(length, end - std::min(end, at)))});
      at += length;
    }
    while (!cut.empty() && cut.back().end <= cut.back().begin) cut.pop_back();
    if (!cut.empty() && join_kept(text_, cut).size() >= joined.size()) cut.pop_back();  // always progress
    return cut;
  }

  size_t units_touched(const std::vector<Span>& kept) const {
    size_t touched = 0;
    for (size_t u = 0, k = 0; u < units_.size() && k < kept.size(); ++u) {
      while (k < kept.size() && kept[k].end <= units_[u].span.begin) ++k;
      if (k < kept.size() && kept[k].begin < units_[u].span.end) ++touched;
    }
    return touched;
  }

  std::string_view text_;
  const CompressOptions& options_;
  const TokenCount& tokens_;
  size_t budget_;
  std::vector<Unit> units_;
  std::vector<Word> words_;
  std::vector<uint8_t> stop_;  // per word
  const StopWordList* language_ = nullptr;
  size_t head_end_ = 0, tail_begin_ = 0;  // units [0, head_end) are the head, [tail_begin, end) the tail
};

}  // namespace

CompressedText PromptCompressor::compress(std::string_view text) const {
  if (text.size() > Tokenizer::kMaxInputBytes)
    throw InvalidInput("compression: the text has " + std::to_string(text.size()) + " bytes, more than the limit of " +
                           std::to_string(Tokenizer::kMaxInputBytes),
                       ErrorCode::kTooLong);
  if (const size_t bad = unicode::find_invalid_utf8(text); bad != std::string_view::npos)
    throw InvalidInput("compression: invalid UTF-8 at byte " + std::to_string(bad), ErrorCode::kInvalidUtf8);

  const TokenCount tokens(tokenizer_.get());
  CompressedText out;
  if (const size_t whole = tokens.count_long(text, options_.max_tokens); whole <= options_.max_tokens) {
    out.text = std::string(text);
    if (!text.empty()) out.kept.push_back({0, static_cast<uint32_t>(text.size())});
    out.tokens = whole;
    out.units = out.units_kept = text.empty() ? 0 : 1;
    return out;
  }
  Funnel funnel(text, options_, tokens, languages_);
  out.compressed = true;
  out.units = funnel.units();
  if (funnel.language()) out.language = funnel.language()->language;
  std::vector<Span> edges = funnel.take_edges();
  const std::vector<size_t> ranked = funnel.rank_middle();
  std::vector<size_t> chosen = funnel.choose(edges, ranked);
  funnel.assemble(std::move(edges), std::move(chosen), out);
  return out;
}

}  // namespace semroute

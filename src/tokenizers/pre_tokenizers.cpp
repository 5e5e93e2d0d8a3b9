#include "tokenizers/pre_tokenizers.h"

#include <functional>
#include <string>

#include "semroute/error.h"
#include "core/regex.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

using nlohmann::json;
using Range = std::pair<size_t, size_t>;

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

SplitBehavior parse_behavior(const std::string& name) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  throw LoadError("tokenizer.json: unknown split behavior '" + name + "'");
}

// Splits `piece` at the given sorted, non-overlapping matches.
void split_at_matches(const AlignedText& piece, std::vector<Range> matches, SplitBehavior behavior, bool invert,
                      std::vector<AlignedText>& out) {
  const size_t n = piece.size();
  // Label every span of the text as match or gap.
  std::vector<std::pair<Range, bool>> spans;
  size_t last = 0;
  for (const auto& m : matches) {
    if (m.first > last) spans.push_back({{last, m.first}, invert});
    spans.push_back({m, !invert});
    last = m.second;
  }
  if (last < n) spans.push_back({{last, n}, invert});

  std::vector<Range> pieces;
  bool previous_was_match = false;
  for (const auto& [range, is_match] : spans) {
    switch (behavior) {
      case SplitBehavior::kRemoved:
        if (!is_match) pieces.push_back(range);
        break;
      case SplitBehavior::kIsolated:
        pieces.push_back(range);
        break;
      case SplitBehavior::kMergedWithPrevious:
        if (is_match && !pieces.empty() && !previous_was_match) {
          pieces.back().second = range.second;
        } else {
          pieces.push_back(range);
        }
        break;
      case SplitBehavior::kMergedWithNext:
        if (!is_match && !pieces.empty() && previous_was_match) {
          pieces.back().second = range.second;
        } else {
          pieces.push_back(range);
        }
        break;
      case SplitBehavior::kContiguous:
        if (is_match && previous_was_match && !pieces.empty()) {
          pieces.back().second = range.second;
        } else {
          pieces.push_back(range);
        }
        break;
    }
    previous_was_match = is_match;
  }
  for (const auto& [b, e] : pieces)
    if (e > b) out.push_back(piece.slice(b, e));
}

// Ranges of consecutive code points for which `pred` holds (one range per
// code point when `each` is set).
std::vector<Range> char_matches(const std::string& s, const std::function<bool(char32_t)>& pred, bool each) {
  std::vector<Range> ranges;
  for (size_t i = 0; i < s.size();) {
    size_t len;
    const char32_t cp = unicode::decode(s, i, &len);
    if (pred(cp)) {
      if (!each && !ranges.empty() && ranges.back().second == i) {
        ranges.back().second = i + len;
      } else {
        ranges.emplace_back(i, i + len);
      }
    }
    i += len;
  }
  return ranges;
}

// Applies `split_one` to every piece.
template <typename Fn>
void split_each(std::vector<AlignedText>& pieces, Fn split_one) {
  std::vector<AlignedText> out;
  out.reserve(pieces.size() * 2);
  for (const auto& piece : pieces) split_one(piece, out);
  pieces = std::move(out);
}

class RegexSplit final : public PreTokenizer {
 public:
  RegexSplit(std::unique_ptr<Regex> regex, std::string literal, SplitBehavior behavior, bool invert)
      : regex_(std::move(regex)), literal_(std::move(literal)), behavior_(behavior), invert_(invert) {}

  void split(std::vector<AlignedText>& pieces) const override {
    split_each(pieces, [this](const AlignedText& piece, std::vector<AlignedText>& out) {
      std::vector<Range> matches;
      const std::string& s = piece.text();
      if (regex_) {
        regex_->for_each_match(s, [&](size_t b, size_t e) { matches.emplace_back(b, e); });
      } else if (!literal_.empty()) {
        for (size_t at = s.find(literal_); at != std::string::npos; at = s.find(literal_, at + literal_.size()))
          matches.emplace_back(at, at + literal_.size());
      }
      split_at_matches(piece, std::move(matches), behavior_, invert_, out);
    });
  }

 private:
  std::unique_ptr<Regex> regex_;
  std::string literal_;
  SplitBehavior behavior_;
  bool invert_;
};

// The GPT-2 split pattern ByteLevel uses when use_regex is true.
const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space), regex_(use_regex ? std::make_unique<Regex>(kGpt2Pattern, Regex::Dialect::kOniguruma) : nullptr) {}

  void split(std::vector<AlignedText>& pieces) const override {
    if (add_prefix_space_) {
      for (auto& piece : pieces) {
        if (piece.empty() || piece.text()[0] == ' ') continue;
        AlignedText prefixed;
        const Span at = piece.original_span(0, 1);
        prefixed.append(" ", Span{at.begin, at.begin});
        prefixed.append(piece);
        piece = std::move(prefixed);
      }
    }
    if (regex_) split_regex(pieces);
    for (auto& piece : pieces) piece = to_byte_chars(piece);
  }

 private:
  void split_regex(std::vector<AlignedText>& pieces) const {
    split_each(pieces, [this](const AlignedText& piece, std::vector<AlignedText>& out) {
      std::vector<Range> matches;
      regex_->for_each_match(piece.text(), [&](size_t b, size_t e) { matches.emplace_back(b, e); });
      split_at_matches(piece, std::move(matches), SplitBehavior::kIsolated, false, out);
    });
  }

  // Every byte becomes its printable stand-in, aligned to the byte's span.
  static AlignedText to_byte_chars(const AlignedText& piece) {
    static const std::array<std::string, 256> utf8 = [] {
      std::array<std::string, 256> t;
      for (int b = 0; b < 256; ++b) unicode::append_utf8(t[b], byte_to_unicode()[b]);
      return t;
    }();
    AlignedText out;
    out.reserve(piece.size() * 2);
    for (size_t i = 0; i < piece.size(); ++i)
      out.append(utf8[static_cast<unsigned char>(piece.text()[i])], piece.original_span(i, i + 1));
    return out;
  }

  bool add_prefix_space_;
  std::unique_ptr<Regex> regex_;
};

// Splits on whitespace (dropped) and isolates each punctuation character.
class BertPreTokenizer final : public PreTokenizer {
 public:
  void split(std::vector<AlignedText>& pieces) const override {
    split_each(pieces, [](const AlignedText& piece, std::vector<AlignedText>& out) {
      std::vector<AlignedText> words;
      split_at_matches(piece, char_matches(piece.text(), unicode::is_whitespace, false), SplitBehavior::kRemoved,
                       false, words);
      for (const auto& word : words)
        split_at_matches(word, char_matches(word.text(), unicode::is_punctuation, true), SplitBehavior::kIsolated,
                         false, out);
    });
  }
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  void split(std::vector<AlignedText>& pieces) const override {
    split_each(pieces, [](const AlignedText& piece, std::vector<AlignedText>& out) {
      split_at_matches(piece, char_matches(piece.text(), unicode::is_whitespace, false), SplitBehavior::kRemoved,
                       false, out);
    });
  }
};

class CharClassSplit final : public PreTokenizer {
 public:
  CharClassSplit(std::function<bool(char32_t)> pred, bool each, SplitBehavior behavior)
      : pred_(std::move(pred)), each_(each), behavior_(behavior) {}
  void split(std::vector<AlignedText>& pieces) const override {
    split_each(pieces, [this](const AlignedText& piece, std::vector<AlignedText>& out) {
      split_at_matches(piece, char_matches(piece.text(), pred_, each_), behavior_, false, out);
    });
  }

 private:
  std::function<bool(char32_t)> pred_;
  bool each_;
  SplitBehavior behavior_;
};

// SentencePiece-style: spaces become `replacement`, which starts each word.
class Metaspace final : public PreTokenizer {
 public:
  Metaspace(std::string replacement, std::string prepend_scheme, bool split)
      : replacement_(std::move(replacement)), prepend_scheme_(std::move(prepend_scheme)), split_(split) {}

  void split(std::vector<AlignedText>& pieces) const override {
    for (size_t p = 0; p < pieces.size(); ++p) {
      AlignedText& piece = pieces[p];
      AlignedText out;
      const bool prepend = prepend_scheme_ == "always" || (prepend_scheme_ == "first" && p == 0);
      if (prepend && !piece.empty() && piece.text().compare(0, replacement_.size(), replacement_) != 0 &&
          piece.text()[0] != ' ') {
        const Span at = piece.original_span(0, 1);
        out.append(replacement_, Span{at.begin, at.begin});
      }
      for (size_t i = 0; i < piece.size(); ++i) {
        if (piece.text()[i] == ' ') {
          out.append(replacement_, piece.original_span(i, i + 1));
        } else {
          out.append(piece.slice(i, i + 1));
        }
      }
      piece = std::move(out);
    }
    if (split_) RegexSplit(nullptr, replacement_, SplitBehavior::kMergedWithNext, false).split(pieces);
  }

 private:
  std::string replacement_;
  std::string prepend_scheme_;
  bool split_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void split(std::vector<AlignedText>& pieces) const override {
    for (const auto& step : steps_) step->split(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

std::unique_ptr<PreTokenizer> make_split(const json& spec) {
  const json& pattern = spec.at("pattern");
  const SplitBehavior behavior = parse_behavior(spec.at("behavior").get<std::string>());
  const bool invert = spec.value("invert", false);
  if (pattern.contains("Regex"))
    return std::make_unique<RegexSplit>(std::make_unique<Regex>(pattern.at("Regex").get<std::string>(), Regex::Dialect::kOniguruma, "tokenizer regex"), "", behavior,
                                        invert);
  if (pattern.contains("String"))
    return std::make_unique<RegexSplit>(nullptr, pattern.at("String").get<std::string>(), behavior, invert);
  throw LoadError("tokenizer.json: Split pattern must be {\"String\": …} or {\"Regex\": …}");
}

}  // namespace

const std::array<char32_t, 256>& byte_to_unicode() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& spec) {
  if (spec.is_null()) return nullptr;
  const std::string type = spec.at("type").get<std::string>();
  if (type == "ByteLevel")
    return std::make_unique<ByteLevel>(spec.value("add_prefix_space", true), spec.value("use_regex", true));
  if (type == "Split") return make_split(spec);
  if (type == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
  if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (type == "Whitespace")
    return std::make_unique<RegexSplit>(std::make_unique<Regex>(R"(\w+|[^\w\s]+)", Regex::Dialect::kOniguruma), "", SplitBehavior::kRemoved, true);
  if (type == "Punctuation")
    return std::make_unique<CharClassSplit>(unicode::is_punctuation, true,
                                            parse_behavior(spec.value("behavior", std::string("Isolated"))));
  if (type == "Digits")
    return std::make_unique<CharClassSplit>([](char32_t c) { return c >= '0' && c <= '9'; },
                                            spec.value("individual_digits", false), SplitBehavior::kIsolated);
  if (type == "Metaspace") {
    std::string scheme = spec.value("prepend_scheme", std::string());
    if (scheme.empty()) scheme = spec.value("add_prefix_space", true) ? "always" : "never";
    return std::make_unique<Metaspace>(spec.value("replacement", std::string("\xE2\x96\x81")), scheme,
                                       spec.value("split", true));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const auto& step : spec.at("pretokenizers"))
      if (auto p = make_pre_tokenizer(step)) steps.push_back(std::move(p));
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  throw Unsupported("tokenizer.json: pre_tokenizer type '" + type + "' is not supported");
}

}  // namespace semroute

#include "tokenizers/normalizers.h"

#include <vector>

#include "semroute/error.h"
#include "core/regex.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

using nlohmann::json;

// Unicode normalization applied chunk by chunk: a chunk starts at a code point
// that cannot compose with what precedes it, so chunks normalize
// independently and each output chunk maps to its input chunk's span.
class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(unicode::NormalForm form) : form_(form) {}

  void normalize(AlignedText& text) const override {
    const std::string& s = text.text();
    if (is_stable(s)) return;
    AlignedText out;
    size_t chunk = 0;
    for (size_t i = 0; i <= s.size();) {
      size_t len = 0;
      const bool boundary = i == s.size() || !unicode::may_compose_with_previous(unicode::decode(s, i, &len));
      if (boundary && i > chunk) {
        const std::string_view piece(s.data() + chunk, i - chunk);
        size_t first_len;
        const char32_t first = unicode::decode(piece, 0, &first_len);
        const bool single_stable = first_len == piece.size() && unicode::is_normalization_stable(first);
        const std::string normalized = single_stable ? std::string(piece) : unicode::normalize(piece, form_);
        if (normalized == piece) {
          out.append(text.slice(chunk, i));  // unchanged: keep byte-exact alignment
        } else {
          out.append(normalized, text.original_span(chunk, i));
        }
        chunk = i;
      }
      if (i == s.size()) break;
      i += len;
    }
    text = std::move(out);
  }

 private:
  // Fast path: text made only of characters that are their own normal form.
  static bool is_stable(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
      if (static_cast<unsigned char>(s[i]) < 0x80) {
        ++i;
        continue;
      }
      size_t len;
      if (!unicode::is_normalization_stable(unicode::decode(s, i, &len))) return false;
      i += len;
    }
    return true;
  }

  unicode::NormalForm form_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  void normalize(AlignedText& text) const override {
    text.map_chars([](char32_t cp, std::string& out) { unicode::append_utf8(out, unicode::to_lower(cp)); });
  }
};

class StripAccentsNormalizer final : public Normalizer {
 public:
  void normalize(AlignedText& text) const override {
    text.map_chars([](char32_t cp, std::string& out) {
      if (!unicode::is_mark_nonspacing(cp)) unicode::append_utf8(out, cp);
    });
  }
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(const json& pattern, std::string content) : content_(std::move(content)) {
    if (pattern.contains("String")) {
      literal_ = pattern.at("String").get<std::string>();
    } else if (pattern.contains("Regex")) {
      regex_ = std::make_unique<Regex>(pattern.at("Regex").get<std::string>(), Regex::Dialect::kOniguruma, "tokenizer regex");
    } else {
      throw LoadError("tokenizer.json: Replace pattern must be {\"String\": …} or {\"Regex\": …}");
    }
  }

  void normalize(AlignedText& text) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    const std::string& s = text.text();
    if (regex_) {
      regex_->for_each_match(s, [&](size_t b, size_t e) { matches.emplace_back(b, e); });
    } else if (!literal_.empty()) {
      for (size_t at = s.find(literal_); at != std::string::npos; at = s.find(literal_, at + literal_.size()))
        matches.emplace_back(at, at + literal_.size());
    }
    if (matches.empty()) return;
    AlignedText out;
    size_t last = 0;
    for (const auto& [b, e] : matches) {
      out.append(text.slice(last, b));
      out.append(content_, text.original_span(b, e));
      last = e;
    }
    out.append(text.slice(last, s.size()));
    text = std::move(out);
  }

 private:
  std::string literal_;
  std::unique_ptr<Regex> regex_;
  std::string content_;
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(AlignedText& text) const override {
    if (text.empty()) return;
    AlignedText out;
    out.append(prefix_, text.original_span(0, 1));
    out.append(text);
    text = std::move(out);
  }

 private:
  std::string prefix_;
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void normalize(AlignedText& text) const override {
    const std::string& s = text.text();
    size_t begin = 0, end = s.size();
    while (left_ && begin < end) {
      size_t len;
      if (!unicode::is_whitespace(unicode::decode(s, begin, &len))) break;
      begin += len;
    }
    while (right_ && end > begin) {
      size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
      size_t len;
      if (!unicode::is_whitespace(unicode::decode(s, start, &len))) break;
      end = start;
    }
    if (begin != 0 || end != s.size()) text = text.slice(begin, end);
  }

 private:
  bool left_, right_;
};

// BERT's normalizer: drop control characters, map whitespace to ' ', put
// spaces around CJK ideographs, strip accents (NFD, drop Mn), lowercase.
class BertNormalizer final : public Normalizer {
 public:
  BertNormalizer(bool clean_text, bool chinese_chars, bool strip_accents, bool lowercase)
      : clean_text_(clean_text), chinese_chars_(chinese_chars), strip_accents_(strip_accents), lowercase_(lowercase) {}

  void normalize(AlignedText& text) const override {
    if (clean_text_ || chinese_chars_) {
      text.map_chars([this](char32_t cp, std::string& out) {
        if (clean_text_) {
          if (cp == 0 || cp == 0xFFFD || unicode::is_control(cp)) return;
          if (unicode::is_whitespace(cp)) {
            out += ' ';
            return;
          }
        }
        if (chinese_chars_ && unicode::is_cjk(cp)) {
          out += ' ';
          unicode::append_utf8(out, cp);
          out += ' ';
          return;
        }
        unicode::append_utf8(out, cp);
      });
    }
    if (strip_accents_) {
      UnicodeNormalizer(unicode::NormalForm::kNFD).normalize(text);
      StripAccentsNormalizer().normalize(text);
    }
    if (lowercase_) LowercaseNormalizer().normalize(text);
  }

 private:
  bool clean_text_, chinese_chars_, strip_accents_, lowercase_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(AlignedText& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const json& spec) {
  if (spec.is_null()) return nullptr;
  const std::string type = spec.at("type").get<std::string>();
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::kNFC);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::kNFD);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::kNFKC);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::kNFKD);
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
  if (type == "Replace")
    return std::make_unique<ReplaceNormalizer>(spec.at("pattern"), spec.at("content").get<std::string>());
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(spec.at("prepend").get<std::string>());
  if (type == "Strip") return std::make_unique<StripNormalizer>(spec.value("strip_left", true), spec.value("strip_right", true));
  if (type == "BertNormalizer") {
    const bool lowercase = spec.value("lowercase", true);
    // strip_accents: null means "same as lowercase" (HF's rule).
    const auto accents = spec.find("strip_accents");
    const bool strip = (accents == spec.end() || accents->is_null()) ? lowercase : accents->get<bool>();
    return std::make_unique<BertNormalizer>(spec.value("clean_text", true), spec.value("handle_chinese_chars", true),
                                            strip, lowercase);
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const auto& step : spec.at("normalizers"))
      if (auto n = make_normalizer(step)) steps.push_back(std::move(n));
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  throw Unsupported("tokenizer.json: normalizer type '" + type + "' is not supported");
}

}  // namespace semroute

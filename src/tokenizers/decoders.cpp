#include "tokenizers/decoders.h"

#include <array>
#include <cstdlib>
#include <unordered_map>

#include "semroute/error.h"
#include "tokenizers/pre_tokenizers.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

using nlohmann::json;

// Bytes that do not form valid UTF-8 become U+FFFD, one per invalid byte.
std::string valid_utf8(const std::string& bytes) {
  std::string out;
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t bad = unicode::find_invalid_utf8(std::string_view(bytes).substr(i));
    if (bad == std::string_view::npos) {
      out.append(bytes, i, std::string::npos);
      break;
    }
    out.append(bytes, i, bad);
    out += "\xEF\xBF\xBD";
    i += bad + 1;
  }
  return out;
}

class ByteLevelDecoder final : public Decoder {
 public:
  ByteLevelDecoder() {
    const auto& table = byte_to_unicode();
    for (int b = 0; b < 256; ++b) unicode_to_byte_[table[b]] = static_cast<char>(b);
  }
  void decode(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& token : tokens) {
      for (size_t i = 0; i < token.size();) {
        size_t len;
        const char32_t cp = unicode::decode(token, i, &len);
        const auto it = unicode_to_byte_.find(cp);
        if (it != unicode_to_byte_.end()) {
          bytes += it->second;
        } else {
          bytes.append(token, i, len);  // an added token written as plain text
        }
        i += len;
      }
    }
    tokens.assign(1, valid_utf8(bytes));
  }

 private:
  std::unordered_map<char32_t, char> unicode_to_byte_;
};

class WordPieceDecoder final : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i > 0) {
        if (t.compare(0, prefix_.size(), prefix_) == 0) {
          t.erase(0, prefix_.size());
        } else {
          t.insert(0, " ");
        }
      }
      if (cleanup_) cleanup(t);
    }
  }

 private:
  // HF's clean_up_tokenization: no space before punctuation and contractions.
  static void cleanup(std::string& t) {
    static const std::array<std::pair<const char*, const char*>, 10> rules = {{
        {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
        {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
    }};
    for (const auto& [from, to] : rules) {
      const std::string f = from;
      for (size_t at = t.find(f); at != std::string::npos; at = t.find(f, at)) t.replace(at, f.size(), to);
    }
  }

  std::string prefix_;
  bool cleanup_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  void decode(std::vector<std::string>& tokens) const override {
    if (from_.empty()) return;
    for (auto& t : tokens)
      for (size_t at = t.find(from_); at != std::string::npos; at = t.find(from_, at + to_.size()))
        t.replace(at, from_.size(), to_);
  }

 private:
  std::string from_, to_;
};

// Consecutive <0xNN> tokens become the bytes they name.
class ByteFallbackDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    const auto flush = [&] {
      if (!bytes.empty()) out.push_back(valid_utf8(bytes));
      bytes.clear();
    };
    for (const auto& t : tokens) {
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
        bytes += static_cast<char>(std::strtol(t.substr(3, 2).c_str(), nullptr, 16));
      } else {
        flush();
        out.push_back(t);
      }
    }
    flush();
    tokens = std::move(out);
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.assign(1, all);
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      for (size_t i = 0; i < start_ && t.compare(0, content_.size(), content_) == 0; ++i) t.erase(0, content_.size());
      for (size_t i = 0; i < stop_ && t.size() >= content_.size() &&
                         t.compare(t.size() - content_.size(), content_.size(), content_) == 0;
           ++i)
        t.erase(t.size() - content_.size());
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first) : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void decode(std::vector<std::string>& tokens) const override {
    ReplaceDecoder(replacement_, " ").decode(tokens);
    if (strip_first_ && !tokens.empty() && !tokens[0].empty() && tokens[0][0] == ' ') tokens[0].erase(0, 1);
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

std::string pattern_string(const json& pattern) {
  if (pattern.is_string()) return pattern.get<std::string>();
  if (pattern.contains("String")) return pattern.at("String").get<std::string>();
  throw Unsupported("tokenizer.json: Replace decoder with a regex pattern is not supported");
}

}  // namespace

std::unique_ptr<Decoder> make_decoder(const json& spec) {
  if (spec.is_null()) return nullptr;
  const std::string type = spec.at("type").get<std::string>();
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "WordPiece")
    return std::make_unique<WordPieceDecoder>(spec.value("prefix", std::string("##")), spec.value("cleanup", true));
  if (type == "Replace")
    return std::make_unique<ReplaceDecoder>(pattern_string(spec.at("pattern")), spec.at("content").get<std::string>());
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip")
    return std::make_unique<StripDecoder>(spec.value("content", std::string(" ")), spec.value("start", 0),
                                          spec.value("stop", 0));
  if (type == "Metaspace") {
    const std::string scheme = spec.value("prepend_scheme", std::string("always"));
    return std::make_unique<MetaspaceDecoder>(spec.value("replacement", std::string("\xE2\x96\x81")),
                                              scheme != "never" && spec.value("add_prefix_space", true));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> steps;
    for (const auto& step : spec.at("decoders"))
      if (auto d = make_decoder(step)) steps.push_back(std::move(d));
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  throw Unsupported("tokenizer.json: decoder type '" + type + "' is not supported");
}

}  // namespace semroute

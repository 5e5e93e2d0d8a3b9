#include "tokenizers/added_vocabulary.h"

#include <algorithm>

#include "semroute/error.h"
#include "tokenizers/models.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

bool is_word_char(char32_t cp) { return cp == '_' || (cp < 0x80 ? std::isalnum(static_cast<int>(cp)) != 0 : !unicode::is_whitespace(cp) && !unicode::is_punctuation(cp)); }

// Code point ending just before `pos` (0 when pos == 0).
char32_t char_before(std::string_view text, size_t pos) {
  if (pos == 0) return 0;
  size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  size_t len;
  return unicode::decode(text, start, &len);
}

}  // namespace

void AddedVocabulary::Trie::insert(const std::string& s, int token) {
  int node = 0;
  for (unsigned char c : s) {
    int next = child(node, c);
    if (next < 0) {
      next = static_cast<int>(nodes.size());
      nodes.emplace_back();
      auto& children = nodes[static_cast<size_t>(node)].children;
      children.insert(std::lower_bound(children.begin(), children.end(), std::make_pair(c, 0)), {c, next});
    }
    node = next;
  }
  if (!s.empty()) first_byte[static_cast<unsigned char>(s[0])] = true;
  nodes[static_cast<size_t>(node)].token = token;
}

int AddedVocabulary::Trie::child(int node, unsigned char c) const {
  const auto& children = nodes[static_cast<size_t>(node)].children;
  const auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(c, 0));
  return (it != children.end() && it->first == c) ? it->second : -1;
}

AddedVocabulary::AddedVocabulary(const nlohmann::json& added_tokens) {
  if (added_tokens.is_null()) return;
  for (const auto& t : added_tokens) {
    AddedToken token;
    token.id = parse_token_id(t.at("id"), "added token " + t.value("content", std::string()).substr(0, 100));
    token.content = t.at("content").get<std::string>();
    token.single_word = t.value("single_word", false);
    token.lstrip = t.value("lstrip", false);
    token.rstrip = t.value("rstrip", false);
    token.normalized = t.value("normalized", !t.value("special", false));
    token.special = t.value("special", false);
    if (token.content.empty()) continue;
    if (unicode::find_invalid_utf8(token.content) != std::string_view::npos)
      throw LoadError("tokenizer.json: added token " + std::to_string(token.id) + " is not valid UTF-8");
    const int index = static_cast<int>(tokens_.size());
    (token.normalized ? normalized_ : raw_).insert(token.content, index);
    if (token.special) special_ids_.push_back(token.id);
    tokens_.push_back(std::move(token));
  }
  std::sort(special_ids_.begin(), special_ids_.end());
}

bool AddedVocabulary::is_special(int32_t id) const {
  return std::binary_search(special_ids_.begin(), special_ids_.end(), id);
}

int AddedVocabulary::longest_at(const Trie& trie, std::string_view text, size_t pos, size_t* end) const {
  int node = 0, found = -1;
  for (size_t i = pos; i < text.size(); ++i) {
    node = trie.child(node, static_cast<unsigned char>(text[i]));
    if (node < 0) break;
    const int token = trie.nodes[static_cast<size_t>(node)].token;
    if (token >= 0) {
      found = token;
      *end = i + 1;
    }
  }
  return found;
}

std::vector<TextSegment> AddedVocabulary::split(std::string_view text, bool normalized) const {
  const Trie& trie = normalized ? normalized_ : raw_;
  std::vector<TextSegment> segments;
  size_t text_start = 0;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (!trie.first_byte[static_cast<unsigned char>(text[pos])]) continue;
    size_t end = 0;
    const int index = longest_at(trie, text, pos, &end);
    if (index < 0) continue;
    const AddedToken& token = tokens_[static_cast<size_t>(index)];
    if (token.single_word) {
      size_t len;
      const bool word_before = is_word_char(char_before(text, pos));
      const bool word_after = end < text.size() && is_word_char(unicode::decode(text, end, &len));
      if (word_before || word_after) continue;
    }
    size_t begin = pos;
    if (token.lstrip)
      while (begin > text_start && unicode::is_whitespace(char_before(text, begin)))
        begin -= unicode::utf8_length(char_before(text, begin));
    if (token.rstrip)
      while (end < text.size()) {
        size_t len;
        if (!unicode::is_whitespace(unicode::decode(text, end, &len))) break;
        end += len;
      }
    if (begin > text_start) segments.push_back({-1, text_start, begin});
    segments.push_back({token.id, begin, end});
    text_start = end;
    pos = end - 1;
  }
  if (text_start < text.size()) segments.push_back({-1, text_start, text.size()});
  return segments;
}

}  // namespace semroute

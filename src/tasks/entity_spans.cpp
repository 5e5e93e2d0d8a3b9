#include "tasks/entity_spans.h"

#include "semroute/error.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

struct ParsedLabel {
  char prefix;  // 'O', 'B', 'I' (E/S folded into I/B), or 'P' for a plain label
  std::string type;
};

ParsedLabel parse_label(const std::string& label) {
  if (label == "O" || label.empty()) return {'O', ""};
  if (label.size() > 2 && (label[1] == '-' || label[1] == '_')) {
    switch (label[0]) {
      case 'B': case 'S': return {'B', label.substr(2)};
      case 'I': case 'E': return {'I', label.substr(2)};
      default: break;
    }
  }
  return {'P', label};
}

}  // namespace

std::vector<EntitySpan> aggregate_entities(std::string_view text, const Encoding& encoding,
                                           const std::vector<TokenLabel>& tokens,
                                           const std::vector<std::string>& labels,
                                           EntityAggregation aggregation) {
  if (tokens.size() > encoding.size()) throw InternalError("more token labels than tokens");
  std::vector<EntitySpan> spans;
  float score_sum = 0;
  size_t count = 0;
  bool open = false;
  const auto close = [&] {
    if (!open) return;
    EntitySpan& s = spans.back();
    // Whole characters only, then no surrounding whitespace.
    while (s.begin > 0 && s.begin < text.size() && unicode::is_continuation_byte(text[s.begin])) --s.begin;
    while (s.end < text.size() && unicode::is_continuation_byte(text[s.end])) ++s.end;
    while (s.begin < s.end) {
      size_t len;
      if (!unicode::is_whitespace(unicode::decode(text, s.begin, &len))) break;
      s.begin += len;
    }
    while (s.end > s.begin) {
      size_t start = s.end - 1;
      while (start > s.begin && unicode::is_continuation_byte(text[start])) --start;
      size_t len;
      if (!unicode::is_whitespace(unicode::decode(text, start, &len))) break;
      s.end = start;
    }
    s.text.assign(text.substr(s.begin, s.end - s.begin));
    s.score = score_sum / static_cast<float>(count);
    if (s.begin == s.end) spans.pop_back();
    open = false;
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (encoding.special_tokens_mask[i] || !encoding.attention_mask[i] || encoding.sequence_ids[i] != 0) {
      close();
      continue;
    }
    const Span offset = encoding.offsets[i];
    const bool inside_character = offset.begin < text.size() && unicode::is_continuation_byte(text[offset.begin]);
    if (inside_character || (aggregation == EntityAggregation::kWord && encoding.continues_word(text, i))) {
      if (open) spans.back().end = std::max<size_t>(spans.back().end, offset.end);
      continue;
    }
    const ParsedLabel label = parse_label(labels.at(static_cast<size_t>(tokens[i].label_id)));
    if (label.prefix == 'O') {
      close();
      continue;
    }
    const bool continues = open && label.prefix != 'B' && spans.back().type == label.type;
    if (continues) {
      spans.back().end = std::max<size_t>(spans.back().end, offset.end);
      score_sum += tokens[i].probability;
      ++count;
      continue;
    }
    close();
    spans.push_back(EntitySpan{label.type, offset.begin, offset.end, "", 0});
    score_sum = tokens[i].probability;
    count = 1;
    open = true;
  }
  close();
  return spans;
}

}  // namespace semroute

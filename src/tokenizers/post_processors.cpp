#include "tokenizers/post_processors.h"

#include <utility>

#include "semroute/error.h"
#include "tokenizers/models.h"

namespace semroute {
namespace {

using nlohmann::json;

void append(Encoding& out, const Encoding& in, int8_t sequence, std::optional<int32_t> type_id) {
  for (size_t i = 0; i < in.size(); ++i)
    out.push(in.ids[i], in.tokens[i], in.offsets[i], sequence, type_id ? *type_id : in.type_ids[i],
             in.special_tokens_mask[i] != 0);
}

struct SpecialToken {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
};

// One step of a template: a special token or a sequence ("A" / "B").
struct TemplatePiece {
  bool is_sequence;
  std::string id;  // special token name, or "A" / "B"
  int32_t type_id;
};

class TemplateProcessing final : public PostProcessor {
 public:
  TemplateProcessing(std::vector<TemplatePiece> single, std::vector<TemplatePiece> pair,
                     std::unordered_map<std::string, SpecialToken> specials)
      : single_(std::move(single)), pair_(std::move(pair)), specials_(std::move(specials)) {
    for (const auto* t : {&single_, &pair_})
      for (const auto& piece : *t)
        if (!piece.is_sequence && specials_.count(piece.id) == 0)
          throw LoadError("tokenizer.json: template uses special token '" + piece.id + "' that it does not define");
  }

  std::vector<int32_t> special_ids() const override {
    std::vector<int32_t> ids;
    for (const auto& [name, token] : specials_) ids.insert(ids.end(), token.ids.begin(), token.ids.end());
    return ids;
  }

  size_t added_tokens(bool pair) const override {
    size_t n = 0;
    for (const auto& piece : pair ? pair_ : single_)
      if (!piece.is_sequence) n += specials_.at(piece.id).ids.size();
    return n;
  }

  Encoding process(Encoding first, std::optional<Encoding> second, bool add_special_tokens) const override {
    if (!add_special_tokens) return join_plain(std::move(first), std::move(second));
    Encoding out;
    for (const auto& piece : second ? pair_ : single_) {
      if (piece.is_sequence) {
        const bool is_first = piece.id == "A";
        append(out, is_first ? first : *second, is_first ? 0 : 1, piece.type_id);
      } else {
        const SpecialToken& special = specials_.at(piece.id);
        for (size_t i = 0; i < special.ids.size(); ++i)
          out.push(special.ids[i], special.tokens[i], Span{}, -1, piece.type_id, true);
      }
    }
    return out;
  }

 private:
  std::vector<TemplatePiece> single_, pair_;
  std::unordered_map<std::string, SpecialToken> specials_;
};

std::vector<TemplatePiece> parse_template(const json& items) {
  std::vector<TemplatePiece> pieces;
  for (const auto& item : items) {
    if (item.contains("SpecialToken")) {
      const auto& s = item.at("SpecialToken");
      pieces.push_back({false, s.at("id").get<std::string>(), s.value("type_id", 0)});
    } else if (item.contains("Sequence")) {
      const auto& s = item.at("Sequence");
      const std::string id = s.at("id").get<std::string>();
      if (id != "A" && id != "B") throw LoadError("tokenizer.json: template sequence must be A or B, got " + id);
      pieces.push_back({true, id, s.value("type_id", 0)});
    } else {
      throw LoadError("tokenizer.json: unknown template item " + item.dump());
    }
  }
  return pieces;
}

SpecialToken special_from_pair(const json& pair) {  // ["[CLS]", 101]
  const std::string token = pair.at(0).get<std::string>();
  return SpecialToken{{parse_token_id(pair.at(1), "post_processor token " + token)}, {token}};
}

// BertProcessing / RobertaProcessing are fixed templates: CLS A SEP (B SEP).
std::unique_ptr<PostProcessor> fixed_template(const json& spec, bool roberta) {
  std::unordered_map<std::string, SpecialToken> specials;
  const SpecialToken cls = special_from_pair(spec.at("cls")), sep = special_from_pair(spec.at("sep"));
  specials[cls.tokens[0]] = cls;
  specials[sep.tokens[0]] = sep;
  const std::string c = cls.tokens[0], s = sep.tokens[0];
  std::vector<TemplatePiece> single = {{false, c, 0}, {true, "A", 0}, {false, s, 0}};
  std::vector<TemplatePiece> pair = single;
  const int32_t second_type = roberta ? 0 : 1;
  if (roberta) pair.push_back({false, s, 0});
  pair.push_back({true, "B", second_type});
  pair.push_back({false, s, second_type});
  return std::make_unique<TemplateProcessing>(single, pair, specials);
}

// Post-processors that add no tokens (ByteLevel with trim_offsets off, …).
class PassThrough final : public PostProcessor {
 public:
  size_t added_tokens(bool) const override { return 0; }
  Encoding process(Encoding first, std::optional<Encoding> second, bool) const override {
    return join_plain(std::move(first), std::move(second));
  }
};

}  // namespace

Encoding join_plain(Encoding first, std::optional<Encoding> second) {
  if (!second) return first;
  Encoding out = std::move(first);
  append(out, *second, 1, 1);
  return out;
}

std::unique_ptr<PostProcessor> make_post_processor(const json& spec) {
  if (spec.is_null()) return nullptr;
  const std::string type = spec.at("type").get<std::string>();
  if (type == "TemplateProcessing") {
    std::unordered_map<std::string, SpecialToken> specials;
    for (const auto& [name, s] : spec.at("special_tokens").items()) {
      SpecialToken token{{}, s.at("tokens").get<std::vector<std::string>>()};
      for (const auto& id : s.at("ids")) token.ids.push_back(parse_token_id(id, "post_processor token " + name));
      if (token.ids.size() != token.tokens.size())
        throw LoadError("tokenizer.json: special token '" + name + "' has mismatched ids and tokens");
      specials[name] = std::move(token);
    }
    return std::make_unique<TemplateProcessing>(parse_template(spec.at("single")), parse_template(spec.at("pair")),
                                                std::move(specials));
  }
  if (type == "BertProcessing") return fixed_template(spec, false);
  if (type == "RobertaProcessing") return fixed_template(spec, true);
  if (type == "ByteLevel") return std::make_unique<PassThrough>();
  if (type == "Sequence") {
    // Our files only chain ByteLevel with one template; keep the template.
    std::unique_ptr<PostProcessor> chosen = std::make_unique<PassThrough>();
    for (const auto& step : spec.at("processors"))
      if (step.at("type").get<std::string>() != "ByteLevel") chosen = make_post_processor(step);
    return chosen;
  }
  throw Unsupported("tokenizer.json: post_processor type '" + type + "' is not supported");
}

}  // namespace semroute

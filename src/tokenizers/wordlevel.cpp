// WordLevel: each pre-tokenized word is one token, its vocabulary id or the
// unk token's (Hugging Face's WordLevel model; small test and domain
// vocabularies use it).
#include "semroute/error.h"
#include "tokenizers/models.h"

namespace semroute {
namespace {

using nlohmann::json;

class WordLevelModel final : public TokenizerModel {
 public:
  explicit WordLevelModel(const json& spec) {
    load_vocab(spec.at("vocab"));
    const std::string unk = spec.value("unk_token", std::string("[UNK]"));
    const auto id = token_to_id(unk);
    if (!id) throw LoadError("tokenizer.json: WordLevel unk_token '" + unk + "' is not in the vocabulary");
    unk_id_ = *id;
  }

  void tokenize(std::string_view word, std::vector<ModelToken>& out) const override {
    if (word.empty()) return;
    out.push_back({token_to_id(word).value_or(unk_id_), 0, static_cast<uint32_t>(word.size())});
  }

 private:
  int32_t unk_id_ = 0;
};

}  // namespace

std::unique_ptr<TokenizerModel> make_wordlevel_model(const json& spec) { return std::make_unique<WordLevelModel>(spec); }

}  // namespace semroute

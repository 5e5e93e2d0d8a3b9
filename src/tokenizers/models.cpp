#include "tokenizers/models.h"

#include <algorithm>
#include <climits>

#include "semroute/error.h"

namespace semroute {

std::unique_ptr<TokenizerModel> make_bpe_model(const nlohmann::json& spec);
std::unique_ptr<TokenizerModel> make_wordpiece_model(const nlohmann::json& spec);
std::unique_ptr<TokenizerModel> make_wordlevel_model(const nlohmann::json& spec);

namespace {
const std::string kNoToken;
}  // namespace

std::optional<int32_t> TokenizerModel::token_to_id(std::string_view token) const {
  // A reused per-thread key keeps lookups free of allocations.
  thread_local std::string key;
  key.assign(token.data(), token.size());
  const auto it = token_to_id_.find(key);
  if (it == token_to_id_.end()) return std::nullopt;
  return it->second;
}

const std::string& TokenizerModel::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= id_to_token_.size()) return kNoToken;
  return id_to_token_[static_cast<size_t>(id)];
}

int32_t parse_token_id(const nlohmann::json& value, const std::string& what) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() > static_cast<uint64_t>(INT32_MAX))
    throw LoadError("tokenizer.json: " + what + " has id " + value.dump() + ", not an integer in [0, 2^31)");
  return static_cast<int32_t>(value.get<uint64_t>());
}

void TokenizerModel::register_token(int32_t id, const std::string& token) {
  if (id < 0) throw LoadError("tokenizer.json: negative token id for '" + token + "'");
  if (static_cast<size_t>(id) >= id_limit_)
    throw LoadError("tokenizer.json: token '" + token.substr(0, 100) + "' has id " + std::to_string(id) +
                    ", far beyond the " + std::to_string(token_to_id_.size()) + " tokens of the vocabulary");
  if (static_cast<size_t>(id) >= id_to_token_.size()) id_to_token_.resize(static_cast<size_t>(id) + 1);
  longest_token_bytes_ = std::max(longest_token_bytes_, token.size());
  id_to_token_[static_cast<size_t>(id)] = token;
  token_to_id_.emplace(token, id);
}

void TokenizerModel::load_vocab(const nlohmann::json& vocab) {
  if (!vocab.is_object()) throw LoadError("tokenizer.json: model.vocab must be an object of token -> id");
  token_to_id_.reserve(vocab.size());
  id_limit_ = 2 * vocab.size() + kIdSlack;
  for (const auto& [token, id] : vocab.items())
    register_token(parse_token_id(id, "vocabulary token '" + token.substr(0, 100) + "'"), token);
}

std::unique_ptr<TokenizerModel> make_tokenizer_model(const nlohmann::json& spec) {
  const std::string type = spec.value("type", std::string(spec.contains("merges") ? "BPE" : ""));
  if (type == "BPE") return make_bpe_model(spec);
  if (type == "WordPiece") return make_wordpiece_model(spec);
  if (type == "WordLevel") return make_wordlevel_model(spec);
  throw Unsupported("tokenizer.json: model type '" + type + "' is not supported (BPE, WordPiece and WordLevel are)");
}

}  // namespace semroute

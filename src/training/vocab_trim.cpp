#include "training/vocab_trim.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/file_input.h"
#include "semroute/error.h"
#include "tokenizers/tokenizer.h"

namespace semroute::training {
namespace {

using nlohmann::json;

std::pair<std::string, std::string> merge_parts(const json& merge) {
  if (merge.is_array() && merge.size() == 2) return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  const std::string text = merge.get<std::string>();
  const size_t space = text.find(' ', 1);
  if (space == std::string::npos) throw InvalidInput("malformed BPE merge '" + text + "'");
  return {text.substr(0, space), text.substr(space + 1)};
}

size_t utf8_length(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Token frequencies over the corpus (by token string).
std::unordered_map<std::string, size_t> count_tokens(const Tokenizer& tokenizer, const std::vector<std::string>& corpus,
                                                     double* per_text) {
  std::unordered_map<std::string, size_t> counts;
  size_t total = 0;
  EncodeOptions options;
  options.add_special_tokens = false;
  for (const std::string& text : corpus) {
    const Encoding encoding = tokenizer.encode(text, options);
    total += encoding.size();
    for (const std::string& token : encoding.tokens) counts[token]++;
  }
  *per_text = corpus.empty() ? 0 : static_cast<double>(total) / static_cast<double>(corpus.size());
  return counts;
}

// Rewrites every special-token id of the post-processor (TemplateProcessing's
// special_tokens, Bert/Roberta's cls / sep pairs, nested Sequences).
void remap_post_processor(json& node, const std::map<std::string, int64_t>& ids) {
  const auto id_of = [&](const std::string& token) {
    const auto it = ids.find(token);
    if (it == ids.end()) throw InvalidInput("post-processor token '" + token + "' was not kept");
    return it->second;
  };
  if (!node.is_object()) return;
  if (node.contains("special_tokens") && node["special_tokens"].is_object())
    for (auto& [name, special] : node["special_tokens"].items()) {
      json remapped = json::array();
      for (const auto& token : special["tokens"]) remapped.push_back(id_of(token.get<std::string>()));
      special["ids"] = remapped;
    }
  for (const char* key : {"cls", "sep"})
    if (node.contains(key) && node[key].is_array() && node[key].size() == 2)
      node[key][1] = id_of(node[key][0].get<std::string>());
  if (node.contains("processors") && node["processors"].is_array())
    for (auto& p : node["processors"]) remap_post_processor(p, ids);
}

}  // namespace

json trim_vocabulary(const std::filesystem::path& tokenizer_json, const std::vector<std::string>& corpus, size_t size,
                     TrimReport* report) {
  json tok = read_json_file(tokenizer_json, kMaxTokenizerFileBytes);
  if (!tok.is_object() || !tok.contains("model") || tok["model"].value("type", "") != "BPE")
    throw InvalidInput(tokenizer_json.string() + ": trimming needs a BPE tokenizer.json");
  json& model = tok["model"];
  const json& vocab = model["vocab"];

  // What each merged token is made of.
  std::unordered_map<std::string, std::pair<std::string, std::string>> parts;
  for (const json& merge : model["merges"]) {
    auto [a, b] = merge_parts(merge);
    parts.emplace(a + b, std::make_pair(a, b));
  }
  TrimReport r;
  r.original_size = vocab.size();
  const auto counts = count_tokens(*load_tokenizer(tokenizer_json), corpus, &r.tokens_per_text);

  std::set<std::string> kept;
  const auto keep = [&](const std::string& token, const auto& self) -> void {
    if (!vocab.contains(token) || !kept.insert(token).second) return;
    const auto it = parts.find(token);
    if (it != parts.end()) self(it->second.first, self), self(it->second.second, self);
  };
  for (const auto& [token, id] : vocab.items())
    if (utf8_length(token) == 1) keep(token, keep);
  std::vector<std::pair<size_t, int64_t>> ranked;  // (count, id), most frequent first, then lower id
  std::vector<std::string> by_id(vocab.size() + 1);
  for (const auto& [token, id] : vocab.items()) {
    const auto i = id.get<int64_t>();
    if (i < 0 || static_cast<size_t>(i) >= by_id.size()) throw InvalidInput("vocabulary ids are not dense");
    by_id[static_cast<size_t>(i)] = token;
    const auto c = counts.find(token);
    if (c != counts.end()) ranked.emplace_back(c->second, i);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [count, id] : ranked) {
    if (kept.size() >= size) break;
    keep(by_id[static_cast<size_t>(id)], keep);
  }

  // Dense ids in the original order; special added tokens after them.
  std::vector<std::pair<int64_t, std::string>> order;
  for (const std::string& token : kept) order.emplace_back(vocab[token].get<int64_t>(), token);
  std::sort(order.begin(), order.end());
  std::map<std::string, int64_t> ids;
  json new_vocab = json::object();
  for (const auto& [old_id, token] : order) {
    ids[token] = static_cast<int64_t>(ids.size());
    new_vocab[token] = ids[token];
  }
  json added = json::array();
  for (json token : tok.value("added_tokens", json::array())) {
    if (!token.value("special", false)) continue;
    const std::string content = token["content"].get<std::string>();
    if (!ids.count(content)) ids[content] = static_cast<int64_t>(ids.size());
    token["id"] = ids[content];
    added.push_back(token);
  }
  json merges = json::array();
  for (const json& merge : model["merges"]) {
    const auto [a, b] = merge_parts(merge);
    if (kept.count(a) && kept.count(b) && kept.count(a + b)) merges.push_back(merge);
  }
  model["vocab"] = new_vocab;
  model["merges"] = merges;
  tok["added_tokens"] = added;
  if (tok.contains("post_processor")) remap_post_processor(tok["post_processor"], ids);
  if (tok.contains("padding") && tok["padding"].is_object() && tok["padding"].contains("pad_token"))
    tok["padding"]["pad_id"] = ids.at(tok["padding"]["pad_token"].get<std::string>());

  r.kept = kept.size();
  r.merges_kept = merges.size();
  if (report != nullptr) *report = r;
  return tok;
}

}  // namespace semroute::training

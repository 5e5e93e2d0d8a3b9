#include "router/compression_config.h"

#include "semroute/error.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

std::shared_ptr<const PromptCompressor> parse_compression(const YamlFields& f, const YAML::Node& node,
                                                          const std::string& field) {
  if (!node.IsMap()) f.fail(field, "expected a map");
  f.only(node, field, {"max_tokens", "tokenizer", "head_ratio", "tail_ratio", "drop_stop_words", "languages"});
  CompressOptions o;
  if (node["max_tokens"]) {
    const auto n = f.scalar<int64_t>(node["max_tokens"], field + ".max_tokens", "a number of tokens");
    if (n < 1 || n > 1000000) f.fail(field + ".max_tokens", "must lie in [1, 1000000]");
    o.max_tokens = static_cast<size_t>(n);
  }
  if (node["head_ratio"]) o.head_ratio = f.number(node["head_ratio"], field + ".head_ratio", 0, 1);
  if (node["tail_ratio"]) o.tail_ratio = f.number(node["tail_ratio"], field + ".tail_ratio", 0, 1);
  if (node["drop_stop_words"])
    o.drop_stop_words = f.scalar<bool>(node["drop_stop_words"], field + ".drop_stop_words", "true or false");
  if (node["languages"]) o.languages = f.strings(node["languages"], field + ".languages");
  std::shared_ptr<const Tokenizer> tokenizer;
  if (node["tokenizer"]) tokenizer = load_tokenizer(f.path(node["tokenizer"], field + ".tokenizer"));
  try {
    return std::make_shared<const PromptCompressor>(std::move(o), std::move(tokenizer));
  } catch (const InvalidInput& e) {
    f.fail(field, e.what());
  }
}

}  // namespace semroute

#include "tasks/pair_scorer.h"

#include <ATen/ops/narrow.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>

#include "core/checkpoint.h"
#include "core/config_reader.h"
#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {
namespace {

std::vector<int64_t> indices(const nlohmann::json& config, const char* key, const std::string& source) {
  const auto it = config.find(key);
  if (it == config.end() || !it->is_array()) throw LoadError(source + ": " + key + " must be a list of integers");
  std::vector<int64_t> out;
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) throw LoadError(source + ": " + key + " holds a non-positive or non-integer value");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// The representation the heads were trained on; what semroute cannot
// reproduce is refused rather than scored differently.
Pooling representation_pooling(const ConfigReader& config) {
  const std::string where = config.source() + ": representation_contract";
  if (!config.has("representation_contract"))
    throw LoadError(config.source() + " has no representation_contract: a pair scorer states how its heads read the encoder");
  const ConfigReader contract = config.get_object("representation_contract");
  if (contract.get_int("version", 0) != 1) throw Unsupported(where + " version is not 1");
  for (const char* key : {"intermediate_normalization", "final_normalization"})
    if (contract.get_string(key, "final_norm") != "final_norm")
      throw Unsupported(where + "." + key + " '" + contract.get_string(key, "") +
                        "': semroute applies the encoder's final norm at every exit");
  if (contract.get_string("head_dtype", "float32") != "float32")
    throw Unsupported(where + ".head_dtype must be float32");
  const std::string pooling = contract.get_string("pooling", "cls");
  if (pooling != "cls" && pooling != "mean") throw LoadError(where + ".pooling must be cls or mean, not '" + pooling + "'");
  return parse_pooling(pooling);
}

}  // namespace

std::shared_ptr<const PairScorer> PairScorer::load(const std::filesystem::path& dir, const PairScorerOptions& options) {
  std::shared_ptr<PairScorer> scorer(new PairScorer());
  const ConfigReader config = ConfigReader::from_file(dir / "config.json");
  scorer->pooling_ = representation_pooling(config);
  scorer->encoder_ = Backbone::load(dir, options);
  if (!scorer->encoder_.tokenizer) throw LoadError(dir.string() + ": a pair scorer needs its tokenizer.json");
  const CoreModel& encoder = *scorer->encoder_.encoder;

  const std::string exits_file = (dir / "matryoshka_config.json").string();
  const nlohmann::json exits = read_json_file(exits_file);
  const std::vector<int64_t> layers = indices(exits, "layer_indices", exits_file);
  const std::vector<int64_t> dims = indices(exits, "dim_indices", exits_file);
  scorer->layer_ = options.layer > 0 ? options.layer : encoder.num_layers();
  scorer->dimension_ = options.dimension > 0 ? options.dimension : encoder.hidden_size();
  const Checkpoint heads = Checkpoint::open_weights_in(dir, "classification_heads");
  const std::string exit = std::to_string(scorer->layer_) + "." + std::to_string(scorer->dimension_) + ".";
  const bool trained = std::count(layers.begin(), layers.end(), scorer->layer_) > 0 &&
                       std::count(dims.begin(), dims.end(), scorer->dimension_) > 0 &&
                       heads.find(exit + "0.weight") != nullptr;
  if (!trained || scorer->layer_ > encoder.num_layers() || scorer->dimension_ > encoder.hidden_size())
    throw LoadError(dir.string() + ": no head was trained for the exit at layer " + std::to_string(scorer->layer_) +
                    ", dimension " + std::to_string(scorer->dimension_) + " (" + exits_file +
                    " and classification_heads.safetensors list them)");
  // The head's hidden width, from the first layer's shape (Linear::load checks it whole).
  const std::vector<int64_t>& first = heads.find(exit + "0.weight")->shape;
  if (first.size() != 2) throw LoadError(dir.string() + ": " + exit + "0.weight must be a matrix");
  const int64_t width = first[0];
  WeightMap weights(heads, {""}, at::TensorOptions().dtype(at::kFloat));
  scorer->hidden_ = Linear::load(weights, exit + "0", scorer->dimension_, width, true);
  scorer->output_ = Linear::load(weights, exit + "3", width, 1, true);
  weights.check();
  scorer->encode_ = encode_options_for(encoder, options);
  return scorer;
}

at::Tensor PairScorer::logits(const ModelInputs& inputs) const {
  c10::InferenceMode guard;
  ForwardOptions forward;
  forward.layers = layer_;
  const at::Tensor hidden = encoder_.encoder->forward(inputs, forward).to(at::kFloat);
  const at::Tensor pooled = at::narrow(pool(pooling_, hidden, inputs.attention_mask), 1, 0, dimension_);
  return output_(activate(Activation::kGeluErf, hidden_(pooled))).squeeze(1);
}

std::vector<ScoredPair> PairScorer::score(const std::vector<TextPair>& pairs) const {
  if (pairs.empty()) throw InvalidInput("no pairs to score");
  std::vector<ScoredPair> out;
  const EncodeRange encode = [&](size_t first, size_t last) {
    std::vector<Encoding> encodings;
    for (size_t i = first; i < last; ++i) encodings.push_back(tokenizer().encode_pair(pairs[i].first, pairs[i].second, encode_));
    return encodings;
  };
  for_each_budgeted_batch(pairs.size(), encode, tokenizer(), encoder_.encoder->device(), [&](const TextBatch& batch, size_t) {
    const at::Tensor scores = logits(batch.inputs).cpu().contiguous();
    CoreModel::check_finite(scores, "pair scores");
    for (size_t i = 0; i < batch.encodings.size(); ++i)
      out.push_back({scores[static_cast<int64_t>(i)].item<float>(), usage_of(batch.encodings[i])});
  });
  return out;
}

}  // namespace semroute

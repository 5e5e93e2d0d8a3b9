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
  const nlohmann::json layout = read_json_file(exits_file);
  std::vector<int64_t> layers = indices(layout, "layer_indices", exits_file);
  std::vector<int64_t> dims = indices(layout, "dim_indices", exits_file);
  std::sort(layers.begin(), layers.end());
  std::sort(dims.rbegin(), dims.rend());
  const Checkpoint heads = Checkpoint::open_weights_in(dir, "classification_heads");
  WeightMap weights(heads, {""}, at::TensorOptions().dtype(at::kFloat));
  // Every trained exit (layer ascending, width descending): a head for each
  // listed pair whose first layer the file holds.
  for (const int64_t layer : layers) {
    for (const int64_t dim : dims) {
      const std::string exit = std::to_string(layer) + "." + std::to_string(dim) + ".";
      const TensorInfo* first = heads.find(exit + "0.weight");
      if (first == nullptr || layer > encoder.num_layers() || dim > encoder.hidden_size()) continue;
      if (first->shape.size() != 2) throw LoadError(dir.string() + ": " + exit + "0.weight must be a matrix");
      const int64_t width = first->shape[0];  // the head's hidden width (Linear::load checks the shapes whole)
      Head head{Linear::load(weights, exit + "0", dim, width, true), Linear::load(weights, exit + "3", width, 1, true)};
      scorer->heads_.emplace(PairExit{layer, dim}, std::move(head));
      scorer->exits_.push_back({layer, dim});
    }
  }
  weights.check();
  const PairExit wanted{options.layer > 0 ? options.layer : encoder.num_layers(),
                        options.dimension > 0 ? options.dimension : encoder.hidden_size()};
  if (scorer->heads_.count(wanted) == 0)
    throw LoadError(dir.string() + ": no head was trained for the exit at layer " + std::to_string(wanted.layer) +
                    ", dimension " + std::to_string(wanted.dimension) + " (" + exits_file +
                    " and classification_heads.safetensors list them)");
  scorer->default_ = wanted;
  scorer->encode_ = encode_options_for(encoder, options);
  return scorer;
}

at::Tensor PairScorer::logits(const ModelInputs& inputs, PairExit exit) const {
  const auto it = heads_.find(exit);
  if (it == heads_.end())
    throw InvalidInput("no pair scorer was trained for layer " + std::to_string(exit.layer) + ", dimension " +
                       std::to_string(exit.dimension));
  c10::InferenceMode guard;
  ForwardOptions forward;
  forward.layers = exit.layer;
  const at::Tensor hidden = encoder_.encoder->forward(inputs, forward).to(at::kFloat);
  const at::Tensor pooled = at::narrow(pool(pooling_, hidden, inputs.attention_mask), 1, 0, exit.dimension);
  return it->second.output(activate(Activation::kGeluErf, it->second.hidden(pooled))).squeeze(1);
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
    const at::Tensor scores = logits(batch.inputs, default_).cpu().contiguous();
    CoreModel::check_finite(scores, "pair scores");
    for (size_t i = 0; i < batch.encodings.size(); ++i)
      out.push_back({scores[static_cast<int64_t>(i)].item<float>(), usage_of(batch.encodings[i])});
  });
  return out;
}

}  // namespace semroute

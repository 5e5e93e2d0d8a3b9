// Embedding descriptors: what an embedding model computes, stated so that a
// vector store can tell whether two models' vectors are comparable.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/sha256.h"
#include "instances.h"
#include "semroute/error.h"

namespace candle::instances {
namespace {

namespace fs = std::filesystem;

std::string sha256_of_text(const std::string& text) { return semroute::sha256_hex(text); }

std::string sha256_of_file(const fs::path& path) {
  try {
    return semroute::sha256_of_file(path);
  } catch (const semroute::Error& e) {
    throw InstanceError("load", e.what());
  }
}

}  // namespace

json runtime_identity(const std::string& dir, const json& config, const Instance& inst) {
  json artifacts = json::array();
  std::vector<fs::path> weights;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() > 12 && name.compare(name.size() - 12, 12, ".safetensors") == 0)
      weights.push_back(entry.path());
  }
  std::sort(weights.begin(), weights.end());
  const fs::path tokenizer = fs::path(dir) / "tokenizer.json";
  const std::string tokenizer_sha = sha256_of_file(tokenizer);
  artifacts.push_back({{"role", "tokenizer"}, {"sha256", tokenizer_sha}});
  for (const auto& w : weights) artifacts.push_back({{"role", "weights"}, {"sha256", sha256_of_file(w)}});
  return {{"version", 1},
          {"model_type", inst.model_type},
          {"runtime", std::string("semroute ") + semroute_version()},
          {"effective_config_sha256", sha256_of_text(config.dump())},  // keys sorted: the parsed config, not its layout
          {"tokenizer_sha256", tokenizer_sha},
          {"artifacts", artifacts},
          {"max_sequence_length", inst.max_input_tokens},
          {"pooling_contract", {{"pooling", "mean"}, {"normalization", "l2"}, {"matryoshka", "prefix_then_l2"}}}};
}

json embedding_descriptor(const Instance& inst, size_t layer, size_t dimension) {
  inst.require_task("embedding");
  if (inst.identity.is_null())
    throw InstanceError("capability", "embedding descriptors are defined for mmBERT embedding models, not " + inst.model_type);
  const size_t width = inst.model->embedding_dim();
  if (layer > inst.layers)
    throw InstanceError("capability", "layer " + std::to_string(layer) + " is beyond the model's " +
                                          std::to_string(inst.layers) + " layers");
  if (dimension > width)
    throw InstanceError("capability", "dimension " + std::to_string(dimension) + " is larger than the output");
  json out = inst.identity;
  out["layer"] = layer > 0 ? layer : inst.layers;
  out["dimension"] = dimension > 0 ? dimension : width;
  return out;
}

}  // namespace candle::instances

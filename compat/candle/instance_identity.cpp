// Embedding descriptors: what an embedding model computes, stated so that a
// vector store can tell whether two models' vectors are comparable. SHA-256
// through OpenSSL's libcrypto (a well-kept implementation, never our own).
#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "instances.h"

namespace candle::instances {
namespace {

namespace fs = std::filesystem;

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
      throw InstanceError("execution", "SHA-256 is unavailable");
  }
  void add(const char* data, size_t n) {
    if (EVP_DigestUpdate(ctx_.get(), data, n) != 1) throw InstanceError("execution", "SHA-256 failed");
  }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), digest, &n) != 1) throw InstanceError("execution", "SHA-256 failed");
    std::string out;
    char byte[3];
    for (unsigned int i = 0; i < n; ++i) {
      std::snprintf(byte, sizeof byte, "%02x", digest[i]);
      out += byte;
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

std::string sha256_of_text(const std::string& text) {
  Sha256 h;
  h.add(text.data(), text.size());
  return h.hex();
}

std::string sha256_of_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InstanceError("load", "cannot read " + path.string());
  Sha256 h;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    h.add(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  return h.hex();
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

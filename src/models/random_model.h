// Writes ModernBERT-family checkpoints with random weights in the Hugging Face
// layout (config.json + model.safetensors [+ tokenizer.json]), at published
// model sizes for benchmarks or tiny for tests. Weights are scaled so
// activations stay of order 1 through every layer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace semroute {

struct RandomModelSpec {
  std::string preset = "tiny";  // modernbert-base, mmbert-base, mmbert-small, tiny
  std::vector<std::string> labels = {"negative", "positive"};
  bool token_task = false;      // ModernBertForTokenClassification instead of sequence
  std::filesystem::path tokenizer;  // copied beside the weights when set
  std::vector<float> label_bias;    // the classifier's bias (zeros when empty): tests steer a random head
  uint64_t seed = 1;
};

// The config.json of a preset (no labels, no architecture); the vocabulary
// size and special-token ids are the ModernBERT tokenizer's. "small" is the
// size of the project's default models.
nlohmann::json modernbert_preset_config(const std::string& preset);

// Throws InvalidInput for an unknown preset.
void write_random_modernbert(const RandomModelSpec& spec, const std::filesystem::path& dir);

// A Matryoshka cross-encoder (tasks/pair_scorer.h) on a random encoder of
// `spec.preset`: random heads at the full exit and at (1 layer, half width).
void write_random_pair_scorer(const RandomModelSpec& spec, const std::filesystem::path& dir);

// Embedding encoders at published sizes: "qwen3-embedding-0.6b",
// "embeddinggemma-300m" (with its Dense modules and modules.json), "minilm-l6".
// The vocabulary is cut to 32000 rows: lookups cost the same at any size, and
// the files stay small.
void write_random_embedding_model(const RandomModelSpec& spec, const std::filesystem::path& dir);

// A tiny Qwen3 backbone (Qwen3Model's bare names: hidden 64, 2 layers, 4
// query and 2 key-value heads of 16, 4,096 positions) over `vocab` tokens.
void write_random_qwen3_backbone(int64_t vocab, uint64_t seed, const std::filesystem::path& dir);

}  // namespace semroute

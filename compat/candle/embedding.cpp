// Sentence embeddings: the one process-wide factory of Qwen3 / Gemma / mmBERT
// embedding models (set by whichever embedding init succeeds first), the 2D
// Matryoshka call (layer early exit x dimension), upstream's auto-routing,
// similarity and top-k, and the batched Qwen3 path whose concurrent callers
// are coalesced into batches.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "embedding_batcher.h"
#include "models.h"

using namespace candle;

namespace {

enum ModelType : int { kQwen3 = 0, kGemma = 1, kMmbert = 2, kMultimodal = 3, kNoModel = -1 };

struct EmbeddingModels {
  std::unique_ptr<Model> by_type[3];  // qwen3, gemma, mmbert
  std::string paths[3];
};
Slot<EmbeddingModels> g_factory;

struct BatchedQwen3 {
  std::unique_ptr<Model> model;
  std::unique_ptr<EmbeddingBatcher> batcher;
};
Slot<BatchedQwen3> g_batched;

const char* const kTypeNames[] = {"qwen3", "gemma", "mmbert", "multimodal"};

ModelType parse_model_type(const char* name) {
  const std::string_view n = text_arg(name, "model_type");
  for (int t = kQwen3; t <= kMultimodal; ++t)
    if (n == kTypeNames[t]) return static_cast<ModelType>(t);
  throw Failure("unknown model_type '" + std::string(n) + "' (qwen3, gemma, mmbert or multimodal)");
}

const Model& loaded(ModelType type) {
  if (type == kMultimodal) throw Failure("multimodal embeddings are not supported by semroute");
  const Model* m = g_factory.require("the embedding models").by_type[type].get();
  if (m == nullptr) throw Failure(std::string(kTypeNames[type]) + " embedding model is not loaded");
  return *m;
}

bool is_loaded(ModelType type) {
  const EmbeddingModels* f = g_factory.get();
  return f != nullptr && type >= kQwen3 && type <= kMmbert && f->by_type[type] != nullptr;
}

// `preferred`, else the first loaded of `fallbacks` (upstream's fallback chains).
ModelType available(ModelType preferred, std::initializer_list<ModelType> fallbacks) {
  if (is_loaded(preferred)) return preferred;
  for (ModelType t : fallbacks)
    if (is_loaded(t)) return t;
  throw Failure("no embedding model is loaded");
}

float elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// First `dim` values of each row re-normalized (dim <= 0 or >= width: all).
std::vector<float> matryoshka(std::vector<float> rows, size_t width, int dim, size_t* out_width) {
  if (dim <= 0 || static_cast<size_t>(dim) >= width) {
    *out_width = width;
    return rows;
  }
  const size_t d = static_cast<size_t>(dim);
  std::vector<float> out;
  out.reserve(rows.size() / width * d);
  for (size_t r = 0; r * width < rows.size(); ++r) {
    const float* row = rows.data() + r * width;
    const double norm = std::sqrt(std::inner_product(row, row + d, row, 0.0));
    for (size_t i = 0; i < d; ++i) out.push_back(norm > 0 ? static_cast<float>(row[i] / norm) : 0.0f);
  }
  *out_width = d;
  return out;
}

// Row-major embeddings of `texts` after `layer` layers (0 = all), cut to `dim`.
std::vector<float> embed(const Model& model, const std::vector<std::string_view>& texts, int layer, int dim,
                         size_t* width) {
  semroute_embed_options options = semroute_embed_default_options();
  options.layer = layer > 0 ? static_cast<uint32_t>(layer) : 0;
  size_t full = 0;
  std::vector<float> rows = model.embed(texts, options, &full);
  return matryoshka(std::move(rows), full, dim, width);
}

EmbeddingResult error_embedding() { return EmbeddingResult{nullptr, 0, true, kNoModel, 0, 0.0f}; }

EmbeddingResult embedding_result(const std::vector<float>& values, int model_type, int sequence_length,
                                 std::chrono::steady_clock::time_point started) {
  return EmbeddingResult{copy_array(values), static_cast<int>(values.size()), false, model_type, sequence_length,
                         elapsed_ms(started)};
}

// The int-returning out-param convention: NULL result -> -1 untouched; else
// the error value is written and replaced by body()'s result on success.
template <class Result, class Body>
int fill(const char* function, Result* result, Result error_value, Body&& body) noexcept {
  if (result == nullptr) {
    log_line(function, "result is NULL");
    return -1;
  }
  *result = error_value;
  return guarded(function, -1, [&] {
    *result = body();
    return 0;
  });
}

EmbeddingResult embed_2d(const char* text, ModelType type, int layer, int dim) {
  const auto started = std::chrono::steady_clock::now();
  const std::string_view t = text_arg(text, "text");
  size_t width = 0;
  const std::vector<float> values = embed(loaded(type), {t}, layer, dim, &width);
  return embedding_result(values, type, word_count(t), started);
}

// Upstream's routing of get_embedding_with_dim: by word count and priorities.
ModelType route(const char* text, float quality, float latency, int target_dim) {
  const int words = word_count(text_arg(text, "text"));
  if (words > 32768) throw Failure("text has more than 32768 words");
  ModelType chosen = words <= 512 ? (quality > 0.7f ? kQwen3 : latency > 0.7f ? kGemma : kQwen3)
                     : words <= 2048 ? kGemma
                                     : kQwen3;
  if (target_dim > 0 && target_dim < 768 && latency > 0.5f) chosen = kGemma;
  return chosen == kQwen3 ? available(kQwen3, {kMmbert, kGemma}) : available(kGemma, {kMmbert, kQwen3});
}

float cosine(const float* a, const float* b, size_t n) {
  const double dot = std::inner_product(a, a + n, b, 0.0);
  const double na = std::sqrt(std::inner_product(a, a + n, a, 0.0));
  const double nb = std::sqrt(std::inner_product(b, b + n, b, 0.0));
  return na > 0 && nb > 0 ? static_cast<float>(dot / (na * nb)) : 0.0f;
}

// Loads the factory from the non-empty paths: a Qwen3 or mmBERT failure
// fails the init, a Gemma failure only warns (upstream's rule).
bool init_factory(const char* function, const char* const paths[3]) noexcept {
  return guarded(function, false, [&] {
    const bool any = std::any_of(paths, paths + 3, [](const char* p) { return p != nullptr && *p != '\0'; });
    if (!any) throw Failure("no model path given");
    g_factory.init([&] {
      auto models = std::make_unique<EmbeddingModels>();
      for (int t = kQwen3; t <= kMmbert; ++t) {
        if (paths[t] == nullptr || *paths[t] == '\0') continue;
        try {
          models->by_type[t] = load_model(paths[t], SEMROUTE_TASK_EMBEDDING);
          models->paths[t] = paths[t];
        } catch (const std::exception& e) {
          if (t != kGemma) throw;
          log_line(function, std::string("gemma model not loaded: ") + e.what());
        }
      }
      return models;
    });
    return true;  // set now or earlier: later inits keep the first models
  });
}

}  // namespace

extern "C" {

// 1 when text has more tokens than the loaded model of model_type reads, 0
// when it fits, -1 when that model is not loaded or an argument is bad.
int embedding_text_exceeds_window(const char* text, const char* model_type) {
  return guarded("embedding_text_exceeds_window", -1, [&] {
    const Model& model = loaded(parse_model_type(model_type));
    return model.count_tokens(text_arg(text, "text")) > model.max_length() ? 1 : 0;
  });
}

bool init_embedding_models_with_mmbert(const char* qwen3_model_path, const char* gemma_model_path,
                                       const char* mmbert_model_path, bool) {
  const char* paths[3] = {qwen3_model_path, gemma_model_path, mmbert_model_path};
  return init_factory("init_embedding_models_with_mmbert", paths);
}

bool init_embedding_models(const char* qwen3_model_path, const char* gemma_model_path, bool) {
  const char* paths[3] = {qwen3_model_path, gemma_model_path, nullptr};
  return init_factory("init_embedding_models", paths);
}

// True when the factory (new or earlier) holds an mmBERT model.
bool init_mmbert_embedding_model(const char* model_path, bool) {
  const char* paths[3] = {nullptr, nullptr, model_path};
  return init_factory("init_mmbert_embedding_model", paths) && is_loaded(kMmbert);
}

int get_embedding_2d_matryoshka(const char* text, const char* model_type, int target_layer, int target_dim,
                                EmbeddingResult* result) {
  return fill("get_embedding_2d_matryoshka", result, error_embedding(),
              [&] { return embed_2d(text, parse_model_type(model_type), target_layer, target_dim); });
}

int get_embedding_with_model_type(const char* text, const char* model_type, int target_dim, EmbeddingResult* result) {
  return fill("get_embedding_with_model_type", result, error_embedding(),
              [&] { return embed_2d(text, parse_model_type(model_type), 0, target_dim); });
}

int get_embedding_with_dim(const char* text, float quality_priority, float latency_priority, int target_dim,
                           EmbeddingResult* result) {
  return fill("get_embedding_with_dim", result, error_embedding(), [&] {
    return embed_2d(text, route(text, quality_priority, latency_priority, target_dim), 0, target_dim);
  });
}

int get_embedding_smart(const char* text, float quality_priority, float latency_priority, EmbeddingResult* result) {
  return get_embedding_with_dim(text, quality_priority, latency_priority, 0, result);
}

int calculate_embedding_similarity(const char* text1, const char* text2, const char* model_type, int target_dim,
                                   EmbeddingSimilarityResult* result) {
  return fill("calculate_embedding_similarity", result, EmbeddingSimilarityResult{-1.0f, kNoModel, 0.0f, true}, [&] {
    const auto started = std::chrono::steady_clock::now();
    const std::string_view a = text_arg(text1, "text1"), b = text_arg(text2, "text2");
    const bool automatic = model_type == nullptr || std::string_view(model_type) == "auto";
    const ModelType type1 = automatic ? route(text1, 0.5f, 0.5f, target_dim) : parse_model_type(model_type);
    const ModelType type2 = automatic ? route(text2, 0.5f, 0.5f, target_dim) : type1;
    size_t width = 0, width2 = 0;
    float similarity = 0;
    if (type1 == type2) {
      const std::vector<float> e = embed(loaded(type1), {a, b}, 0, target_dim, &width);
      similarity = cosine(e.data(), e.data() + width, width);
    } else {  // upstream embeds each text with its own routed model
      const std::vector<float> e1 = embed(loaded(type1), {a}, 0, target_dim, &width);
      const std::vector<float> e2 = embed(loaded(type2), {b}, 0, target_dim, &width2);
      if (width != width2) throw Failure("the two texts were routed to models of different widths");
      similarity = cosine(e1.data(), e2.data(), width);
    }
    return EmbeddingSimilarityResult{similarity, type1, elapsed_ms(started), false};
  });
}

int calculate_similarity_batch(const char* query, const char** candidates, int num_candidates, int top_k,
                               const char* model_type, int target_dim, BatchSimilarityResult* result) {
  return fill("calculate_similarity_batch", result, BatchSimilarityResult{nullptr, 0, kNoModel, 0.0f, true}, [&] {
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::string_view> texts = texts_arg(candidates, num_candidates, "candidates");
    if (texts.empty()) throw Failure("no candidates");
    texts.insert(texts.begin(), text_arg(query, "query"));
    ModelType type;
    if (model_type == nullptr || std::string_view(model_type) == "auto") {
      size_t bytes = 0;
      for (auto t : texts) bytes += t.size();
      type = bytes / texts.size() > 512 ? available(kQwen3, {kMmbert, kGemma}) : available(kGemma, {kMmbert, kQwen3});
    } else {
      type = parse_model_type(model_type);
    }
    size_t width = 0;
    const std::vector<float> e = embed(loaded(type), texts, 0, target_dim, &width);
    std::vector<SimilarityMatch> matches;
    for (int i = 0; i < num_candidates; ++i)
      matches.push_back({i, cosine(e.data(), e.data() + (i + 1) * width, width)});
    std::stable_sort(matches.begin(), matches.end(),
                     [](const SimilarityMatch& x, const SimilarityMatch& y) { return x.similarity > y.similarity; });
    if (top_k > 0 && top_k < num_candidates) matches.resize(static_cast<size_t>(top_k));
    return BatchSimilarityResult{copy_array(matches), static_cast<int>(matches.size()), type, elapsed_ms(started),
                                 false};
  });
}

void free_batch_similarity_result(BatchSimilarityResult* result) {
  if (result == nullptr) return;
  std::free(result->matches);
  result->matches = nullptr;
  result->num_matches = 0;
}

// Always the qwen3 and gemma entries (upstream lists no others); sizes are
// the loaded models' own.
int get_embedding_models_info(EmbeddingModelsInfoResult* result) {
  return fill("get_embedding_models_info", result, EmbeddingModelsInfoResult{nullptr, 0, true}, [&] {
    const EmbeddingModels& f = g_factory.require("the embedding models");
    EmbeddingModelInfo* models = zeroed_array<EmbeddingModelInfo>(2);
    for (int t = kQwen3; t <= kGemma; ++t) {
      const Model* m = f.by_type[t].get();
      models[t] = EmbeddingModelInfo{copy_string(kTypeNames[t]), m != nullptr,
                                     m ? static_cast<int>(m->max_length()) : 0,
                                     m ? static_cast<int>(m->embedding_dim()) : 0, copy_string(f.paths[t])};
    }
    return EmbeddingModelsInfoResult{models, 2, false};
  });
}

void free_embedding_models_info(EmbeddingModelsInfoResult* result) {
  if (result == nullptr || result->models == nullptr) return;
  for (int i = 0; i < result->num_models; ++i) {
    std::free(result->models[i].model_name);
    std::free(result->models[i].model_path);
  }
  std::free(result->models);
  result->models = nullptr;
  result->num_models = 0;
}

bool init_embedding_models_batched(const char* qwen3_model_path, int max_batch_size, unsigned long long max_wait_ms,
                                   bool) {
  return init_slot("init_embedding_models_batched", g_batched, WhenSet::kTrue, [&] {
    auto b = std::make_unique<BatchedQwen3>();
    b->model = load_model(qwen3_model_path, SEMROUTE_TASK_EMBEDDING);
    const auto wait = std::chrono::milliseconds(std::min<unsigned long long>(max_wait_ms, 60000));
    b->batcher = std::make_unique<EmbeddingBatcher>(*b->model, static_cast<size_t>(std::max(max_batch_size, 1)), wait);
    return b;
  });
}

int get_embedding_batched(const char* text, const char* model_type, int target_dim, EmbeddingResult* result) {
  return fill("get_embedding_batched", result, error_embedding(), [&] {
    const auto started = std::chrono::steady_clock::now();
    if (model_type != nullptr && std::string_view(model_type) != "qwen3")
      throw Failure("the batched path serves model_type qwen3 only");
    const BatchedQwen3& b = g_batched.require("the batched embedding model");
    const std::string_view t = text_arg(text, "text");
    std::vector<float> row = b.batcher->embed(t);
    size_t width = 0;
    row = matryoshka(std::move(row), row.size(), target_dim, &width);
    const int tokens = static_cast<int>(b.model->tokenize(t).ids.size());
    return embedding_result(row, kQwen3, tokens, started);
  });
}

// Upstream's is a no-op too: the batcher lives as long as the process.
void shutdown_embedding_batched(void) {}

void free_embedding(float* data, int) { std::free(data); }

}  // extern "C"

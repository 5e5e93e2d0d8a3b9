// The BERT sentence-embedding model (upstream's BERT_SIMILARITY slot, e.g.
// all-MiniLM-L6-v2): embeddings, similarity, nearest candidate, tokens.
#include <algorithm>
#include <chrono>

#include "models.h"

using namespace candle;

namespace {

Slot<Model> g_similarity;

constexpr int kDefaultTokens = 512;

// `text` cut so that it tokenizes to at most max_length tokens (special
// tokens included): the model was loaded for its longest inputs, a call may
// ask for fewer (max_length <= 0: 512).
std::string_view truncated(const Model& model, std::string_view text, int max_length) {
  const size_t limit = static_cast<size_t>(max_length > 0 ? max_length : kDefaultTokens);
  if (limit >= model.max_length()) return text;
  const semroute::Tokens tokens = model.tokenize(text);
  if (tokens.ids.size() <= limit) return text;
  size_t specials = 0;
  for (const auto& [begin, end] : tokens.offsets) specials += begin == 0 && end == 0 ? 1 : 0;
  size_t kept = limit > specials ? limit - specials : 0;
  for (const auto& [begin, end] : tokens.offsets) {
    if (begin == 0 && end == 0) continue;
    if (kept-- == 0) return text.substr(0, begin);
  }
  return text;
}

std::vector<float> embed_texts(const std::vector<std::string_view>& texts, int max_length) {
  const Model& model = g_similarity.require("the similarity model");
  std::vector<std::string_view> cut;
  for (auto t : texts) cut.push_back(truncated(model, t, max_length));
  return model.embed(cut);
}

float dot(const float* a, const float* b, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

extern "C" {

bool init_similarity_model(const char* model_id, bool) {
  if (model_id != nullptr && *model_id == '\0') {
    log_line("init_similarity_model",
             "no model directory given (upstream would download sentence-transformers/all-MiniLM-L6-v2); "
             "semroute loads local directories: pass the model's directory");
    return false;
  }
  return init_slot("init_similarity_model", g_similarity, WhenSet::kFalse,
                   [&] { return load_model(model_id, SEMROUTE_TASK_EMBEDDING, kDefaultTokens); });
}

bool is_similarity_model_initialized(void) { return g_similarity.is_set(); }

EmbeddingResult get_text_embedding(const char* text, int max_length) {
  return guarded("get_text_embedding", EmbeddingResult{nullptr, 0, true, -1, 0, 0.0f}, [&] {
    const auto started = std::chrono::steady_clock::now();
    const std::vector<float> e = embed_texts({text_arg(text, "text")}, max_length);
    const float ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - started).count();
    return EmbeddingResult{copy_array(e), static_cast<int>(e.size()), false, -1, 0, ms};
  });
}

float calculate_similarity(const char* text1, const char* text2, int max_length) {
  return guarded("calculate_similarity", -1.0f, [&] {
    const std::vector<float> e = embed_texts({text_arg(text1, "text1"), text_arg(text2, "text2")}, max_length);
    const size_t dim = e.size() / 2;
    return dot(e.data(), e.data() + dim, dim);  // rows are L2-normalized
  });
}

SimilarityResult find_most_similar(const char* query, const char** candidates, int num_candidates, int max_length) {
  return guarded("find_most_similar", SimilarityResult{-1, -1.0f}, [&] {
    std::vector<std::string_view> texts = texts_arg(candidates, num_candidates, "candidates");
    if (texts.empty()) throw Failure("no candidates");
    texts.insert(texts.begin(), text_arg(query, "query"));
    const std::vector<float> e = embed_texts(texts, max_length);
    const size_t dim = e.size() / texts.size();
    SimilarityResult best{-1, -1.0f};
    for (int i = 0; i < num_candidates; ++i) {
      const float score = dot(e.data(), e.data() + (i + 1) * dim, dim);
      if (best.index < 0 || score > best.score) best = {i, score};
    }
    return best;
  });
}

TokenizationResult tokenize_text(const char* text, int max_length) {
  return guarded("tokenize_text", TokenizationResult{nullptr, 0, nullptr, true}, [&] {
    const Model& model = g_similarity.require("the similarity model");
    const semroute::Tokens tokens = model.tokenize(truncated(model, text_arg(text, "text"), max_length));
    TokenizationResult r{copy_array(tokens.ids), static_cast<int>(tokens.ids.size()), nullptr, false};
    r.tokens = zeroed_array<char*>(tokens.tokens.size());
    for (size_t i = 0; i < tokens.tokens.size(); ++i) r.tokens[i] = copy_string(tokens.tokens[i]);
    return r;
  });
}

// Byte ranges of windows of the similarity model's size (max_length <= 0:
// its limit) over the text: the whole text when it fits, else windows of
// the content tokens a window holds, each starting half a window after the
// previous, the first at byte 0 and the last ending the text.
TextWindowsResult get_text_windows(const char* text, int max_length) {
  return guarded("get_text_windows", TextWindowsResult{nullptr, 0, true}, [&] {
    const Model& model = g_similarity.require("the similarity model");
    const std::string_view t = text_arg(text, "text");
    const size_t limit = max_length > 0 ? static_cast<size_t>(max_length) : model.max_length();
    const size_t specials = model.tokenize("").ids.size();
    if (limit <= specials) throw Failure("max_length leaves no room beside the special tokens");
    const size_t content = limit - specials, stride = std::max<size_t>(content / 2, 1);
    const semroute::Tokens tokens = model.tokenize(t, false, true);
    const size_t n = tokens.ids.size();
    std::vector<int> ranges;
    for (size_t first = 0;; first += stride) {
      const size_t last = std::min(first + content, n);
      ranges.push_back(first == 0 ? 0 : static_cast<int>(char_start(t, tokens.offsets[first].first)));
      ranges.push_back(last == n ? static_cast<int>(t.size()) : static_cast<int>(char_end(t, tokens.offsets[last - 1].second)));
      if (last == n) break;
    }
    return TextWindowsResult{copy_array(ranges), static_cast<int>(ranges.size() / 2), false};
  });
}

void free_text_windows(TextWindowsResult result) {
  if (result.offsets != nullptr && result.window_count > 0) std::free(result.offsets);
}

void free_tokenization_result(TokenizationResult result) {
  std::free(result.token_ids);
  free_strings(result.tokens, result.token_count);
}

}  // extern "C"

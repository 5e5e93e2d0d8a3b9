// semroute: the C++ client API, header-only over the stable C API.
//
//   auto model = semroute::Model::load("models/domain");
//   semroute::Prediction p = model.classify("What is 2 + 2?");
//   std::cout << p.label << " " << p.confidence << "\n";
//
// Failures throw semroute::Error with the C API's code. A Model is movable,
// not copyable, and safe to use from many threads at once (not while it is
// being destroyed or moved from). Results are plain values owned by the caller.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "semroute/error.h"
#include "semroute/semroute.h"

namespace semroute {

// What one input was (semroute_input_usage).
struct Usage {
  uint64_t input_tokens = 0;      // before truncation; 0: cut and not counted to its end
  uint64_t processed_tokens = 0;  // what the model read
  bool truncated = false;
};

struct Prediction {
  int32_t class_id = -1;
  std::string label;
  float confidence = 0;
  std::vector<float> probabilities;  // in label order
  Usage input;
};

// One window of a long document (semroute_window).
struct WindowPrediction {
  uint64_t token_begin = 0;  // the window's text tokens in the document's
  uint64_t token_end = 0;
  uint64_t begin = 0;        // the bytes of the document they cover
  uint64_t end = 0;
  Prediction prediction;  // its `input` is not set: a window is never cut
};

struct Entity {
  std::string type;
  uint64_t begin = 0;  // byte offsets into the input
  uint64_t end = 0;
  std::string text;
  float score = 0;
};

struct LabeledToken {
  int32_t token_id = 0;
  int32_t label_id = 0;
  std::string label;
  uint64_t begin = 0;
  uint64_t end = 0;
  float probability = 0;
};

struct TokenPredictions {
  std::vector<Entity> entities;
  std::vector<LabeledToken> tokens;
  Usage input;
};

// A long document token-classified window by window (semroute_token_classify_windows).
struct DocumentTokenPredictions {
  TokenPredictions result;  // every text token once; entities over the whole document
  std::vector<std::pair<uint64_t, uint64_t>> windows;  // the windows' text tokens
  uint64_t content_tokens = 0;
};

struct Match {
  size_t index = 0;  // into the candidates
  float score = 0;   // cosine similarity (top_k), relevance logit (rerank)
};

// One text's embedding and what the text was (semroute_embed_batch_result).
struct Embedding {
  std::vector<float> values;
  Usage input;
};

// One (query, document) pair scored by a cross-encoder (semroute_score_pairs).
struct PairScore {
  float score = 0;  // raw relevance logit
  Usage input;
};

struct Tokens {
  std::vector<int32_t> ids;
  std::vector<std::pair<uint64_t, uint64_t>> offsets;  // byte [begin, end) per token
  std::vector<std::string> tokens;
};

namespace detail {

// Throws the status as semroute::Error (and frees it); nothing on success.
inline void check(semroute_status* status) {
  if (status == nullptr) return;
  const auto code = static_cast<ErrorCode>(semroute_status_code(status));
  std::string message = semroute_status_message(status);
  semroute_status_free(status);
  throw Error(code, message);
}

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const noexcept { Free(p); }
};

template <class T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, Deleter<T, Free>>;

// Texts packed as the C API's batches: one buffer plus count + 1 offsets.
struct Batch {
  explicit Batch(const std::vector<std::string_view>& texts) {
    offsets.reserve(texts.size() + 1);
    offsets.push_back(0);
    for (auto t : texts) {
      bytes.append(t.data(), t.size());
      offsets.push_back(bytes.size());
    }
  }
  std::string bytes;
  std::vector<uint64_t> offsets;
};

inline Usage usage(const semroute_input_usage* u) {
  return u != nullptr ? Usage{u->input_tokens, u->processed_tokens, u->truncated != 0} : Usage{};
}

inline semroute_window_options window_options(uint32_t size, uint32_t overlap, uint64_t max_document_tokens) {
  semroute_window_options options = semroute_window_default_options();
  options.size = size;
  options.overlap = overlap;
  options.max_document_tokens = max_document_tokens;
  return options;
}

inline std::vector<Prediction> predictions(const semroute_classifications* r) {
  std::vector<Prediction> out(semroute_classifications_count(r));
  for (size_t i = 0; i < out.size(); ++i) {
    size_t n = 0;
    const float* probs = semroute_classifications_probabilities(r, i, &n);
    out[i] = {semroute_classifications_class_id(r, i), semroute_classifications_label(r, i),
              semroute_classifications_confidence(r, i), std::vector<float>(probs, probs + n),
              usage(semroute_classifications_input(r, i))};
  }
  return out;
}

inline std::vector<TokenPredictions> token_predictions(const semroute_token_results* r) {
  std::vector<TokenPredictions> out(semroute_token_results_count(r));
  for (size_t i = 0; i < out.size(); ++i) {
    size_t n = 0;
    const semroute_entity* const* e = semroute_token_results_entities(r, i, &n);
    for (size_t j = 0; j < n; ++j)
      out[i].entities.push_back({e[j]->type, e[j]->begin, e[j]->end, std::string(e[j]->text, e[j]->text_length),
                                 e[j]->score});
    const semroute_token_label* const* t = semroute_token_results_tokens(r, i, &n);
    for (size_t j = 0; j < n; ++j)
      out[i].tokens.push_back(
          {t[j]->token_id, t[j]->label_id, t[j]->label, t[j]->begin, t[j]->end, t[j]->probability});
    out[i].input = usage(semroute_token_results_input(r, i));
  }
  return out;
}

}  // namespace detail

class Model {
 public:
  static semroute_model_params default_params() { return semroute_model_default_params(); }

  // Loads a model directory for its task (see semroute_model_params).
  static Model load(const std::string& path, const semroute_model_params& params = default_params()) {
    semroute_model* model = nullptr;
    detail::check(semroute_model_load(path.c_str(), &params, &model));
    return Model(model);
  }

  // A task head from head_dir bound to this model's encoder, which it shares
  // (semroute_model_bind_head): this model may be freed before the head.
  Model bind_head(const std::string& head_dir, const semroute_model_params& params = default_params()) const {
    semroute_model* model = nullptr;
    detail::check(semroute_model_bind_head(get(), head_dir.c_str(), &params, &model));
    return Model(model);
  }
  // Whether both run on the same encoder weights in memory.
  bool shares_encoder(const Model& other) const { return semroute_model_shares_encoder(get(), other.get()) != 0; }

  semroute_task task() const { return semroute_model_task(get()); }
  std::string model_type() const { return semroute_model_type(get()); }
  std::string architecture() const { return semroute_model_architecture(get()); }
  size_t hidden_size() const { return semroute_model_hidden_size(get()); }
  size_t max_length() const { return semroute_model_max_length(get()); }
  size_t embedding_dim() const { return semroute_model_embedding_dim(get()); }
  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < semroute_model_num_labels(get()); ++i) out.emplace_back(semroute_model_label(get(), i));
    return out;
  }
  // Scores are independent sigmoids (config.json problem_type
  // multi_label_classification), not a softmax over the labels.
  bool multi_label() const { return semroute_model_multi_label(get()) != 0; }

  // As the model reads it, or with `whole` to its end (semroute_tokenize_whole).
  Tokens tokenize(std::string_view text, bool add_special_tokens = true, bool whole = false) const {
    semroute_tokens* raw = nullptr;
    const auto call = whole ? &semroute_tokenize_whole : &semroute_tokenize;
    detail::check(call(get(), text.data(), text.size(), add_special_tokens ? 1 : 0, &raw));
    const detail::Owned<semroute_tokens, semroute_tokens_free> tokens(raw);
    Tokens out;
    const size_t n = semroute_tokens_count(raw);
    const int32_t* ids = semroute_tokens_ids(raw);
    const uint64_t* offsets = semroute_tokens_offsets(raw);
    for (size_t i = 0; i < n; ++i) {
      out.ids.push_back(ids[i]);
      out.offsets.emplace_back(offsets[2 * i], offsets[2 * i + 1]);
      out.tokens.emplace_back(semroute_tokens_token(raw, i));
    }
    return out;
  }

  // Tokens of text as the model reads it, special tokens included, to its end.
  size_t count_tokens(std::string_view text) const { return tokenize(text, true, true).ids.size(); }

  Prediction classify(std::string_view text) const { return classify(std::vector<std::string_view>{text}).at(0); }

  std::vector<Prediction> classify(const std::vector<std::string_view>& texts) const {
    const detail::Batch batch(texts);
    semroute_classifications* raw = nullptr;
    detail::check(semroute_classify_batch(get(), batch.bytes.data(), batch.offsets.data(), texts.size(), &raw));
    const detail::Owned<semroute_classifications, semroute_classifications_free> results(raw);
    return detail::predictions(raw);
  }

  // A long document window by window (semroute_classify_windows): windows of
  // `size` tokens (0 = max_length) sharing `overlap` text tokens; a document
  // of more than max_document_tokens (0 = no limit) is refused, never cut.
  std::vector<WindowPrediction> classify_windows(std::string_view document, uint32_t size = 0, uint32_t overlap = 0,
                                                 uint64_t max_document_tokens = 0) const {
    const semroute_window_options options = detail::window_options(size, overlap, max_document_tokens);
    semroute_windows* raw = nullptr;
    detail::check(semroute_classify_windows(get(), document.data(), document.size(), &options, &raw));
    const detail::Owned<semroute_windows, semroute_windows_free> windows(raw);
    std::vector<WindowPrediction> out;
    for (size_t i = 0; i < semroute_windows_count(raw); ++i) {
      const semroute_window* w = semroute_windows_window(raw, i);
      out.push_back({w->token_begin, w->token_end, w->begin, w->end,
                     Prediction{w->class_id, w->label, w->confidence,
                                std::vector<float>(w->probabilities, w->probabilities + w->num_labels), Usage{}}});
    }
    return out;
  }

  // (first[i], second[i]) pairs with the tokenizer's pair template (NLI).
  std::vector<Prediction> classify_pairs(const std::vector<std::string_view>& firsts,
                                         const std::vector<std::string_view>& seconds) const {
    if (firsts.size() != seconds.size()) throw Error(ErrorCode::kInvalidArgument, "classify_pairs: sizes differ");
    const detail::Batch a(firsts), b(seconds);
    semroute_classifications* raw = nullptr;
    detail::check(semroute_classify_pairs(get(), a.bytes.data(), a.offsets.data(), b.bytes.data(), b.offsets.data(),
                                          firsts.size(), &raw));
    const detail::Owned<semroute_classifications, semroute_classifications_free> results(raw);
    return detail::predictions(raw);
  }

  TokenPredictions classify_tokens(std::string_view text) const {
    return classify_tokens(std::vector<std::string_view>{text}).at(0);
  }

  std::vector<TokenPredictions> classify_tokens(const std::vector<std::string_view>& texts) const {
    const detail::Batch batch(texts);
    semroute_token_results* raw = nullptr;
    detail::check(semroute_token_classify_batch(get(), batch.bytes.data(), batch.offsets.data(), texts.size(), &raw));
    const detail::Owned<semroute_token_results, semroute_token_results_free> results(raw);
    return detail::token_predictions(raw);
  }

  DocumentTokenPredictions classify_token_windows(std::string_view document, uint32_t size = 0, uint32_t overlap = 0,
                                                  uint64_t max_document_tokens = 0) const {
    const semroute_window_options options = detail::window_options(size, overlap, max_document_tokens);
    semroute_token_results* raw = nullptr;
    detail::check(semroute_token_classify_windows(get(), document.data(), document.size(), &options, &raw));
    const detail::Owned<semroute_token_results, semroute_token_results_free> results(raw);
    DocumentTokenPredictions out;
    out.result = detail::token_predictions(raw).at(0);
    size_t count = 0;
    const uint64_t* windows = semroute_token_results_windows(raw, &count, &out.content_tokens);
    for (size_t i = 0; i < count; ++i) out.windows.emplace_back(windows[2 * i], windows[2 * i + 1]);
    return out;
  }

  std::vector<float> embed(std::string_view text) const {
    std::vector<float> out(embedding_dim());
    detail::check(semroute_embed(get(), text.data(), text.size(), out.data(), out.size()));
    return out;
  }

  // Row-major [texts.size(), embedding_dim()].
  std::vector<float> embed(const std::vector<std::string_view>& texts) const {
    const detail::Batch batch(texts);
    std::vector<float> out(texts.size() * embedding_dim());
    detail::check(semroute_embed_batch(get(), batch.bytes.data(), batch.offsets.data(), texts.size(), out.data(),
                                       out.size()));
    return out;
  }

  // Row-major [texts.size(), *dimension] with per-call options (the "2D
  // Matryoshka" layer and dimension); *dimension is the row width.
  std::vector<float> embed(const std::vector<std::string_view>& texts, const semroute_embed_options& options,
                           size_t* dimension) const {
    const detail::Batch batch(texts);
    const size_t width = options.dimension > 0 ? options.dimension : embedding_dim();
    // An early exit may skip the Dense modules: rows are at most hidden_size wide.
    std::vector<float> out(texts.size() * std::max(width, hidden_size()));
    detail::check(semroute_embed_batch_with(get(), batch.bytes.data(), batch.offsets.data(), texts.size(), &options,
                                            out.data(), out.size(), dimension));
    out.resize(texts.size() * *dimension);
    return out;
  }

  // Embeddings with what each text was (tokens in, tokens read, truncated).
  std::vector<Embedding> embed_with_input(const std::vector<std::string_view>& texts,
                                          const semroute_embed_options& options = semroute_embed_default_options()) const {
    const detail::Batch batch(texts);
    semroute_embeddings* raw = nullptr;
    detail::check(semroute_embed_batch_result(get(), batch.bytes.data(), batch.offsets.data(), texts.size(), &options, &raw));
    const detail::Owned<semroute_embeddings, semroute_embeddings_free> results(raw);
    std::vector<Embedding> out(semroute_embeddings_count(raw));
    const size_t dim = semroute_embeddings_dimension(raw);
    for (size_t i = 0; i < out.size(); ++i) {
      const float* v = semroute_embeddings_vector(raw, i);
      out[i] = {std::vector<float>(v, v + dim), detail::usage(semroute_embeddings_input(raw, i))};
    }
    return out;
  }

  float similarity(std::string_view a, std::string_view b) const {
    float out = 0;
    detail::check(semroute_similarity(get(), a.data(), a.size(), b.data(), b.size(), &out));
    return out;
  }

  std::vector<Match> top_k(std::string_view query, const std::vector<std::string_view>& candidates, size_t k) const {
    return ranked(query, candidates, k, &semroute_top_k);
  }

  // Pair scoring models: (queries[i], documents[i]) scored together.
  std::vector<PairScore> score_pairs(const std::vector<std::string_view>& queries,
                                     const std::vector<std::string_view>& documents) const {
    if (queries.size() != documents.size()) throw Error(ErrorCode::kInvalidArgument, "score_pairs: sizes differ");
    const detail::Batch q(queries), d(documents);
    semroute_pair_scores* raw = nullptr;
    detail::check(semroute_score_pairs(get(), q.bytes.data(), q.offsets.data(), d.bytes.data(), d.offsets.data(),
                                       queries.size(), &raw));
    const detail::Owned<semroute_pair_scores, semroute_pair_scores_free> results(raw);
    std::vector<PairScore> out(semroute_pair_scores_count(raw));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = {semroute_pair_scores_score(raw, i), detail::usage(semroute_pair_scores_input(raw, i))};
    return out;
  }

  // The k documents most relevant to the query, best first.
  std::vector<Match> rerank(std::string_view query, const std::vector<std::string_view>& documents, size_t k) const {
    return ranked(query, documents, k, &semroute_rerank);
  }

  // The C handle, for calls this wrapper does not cover. Borrowed.
  const semroute_model* get() const { return model_.get(); }

 private:
  explicit Model(semroute_model* model) : model_(model) {}

  // semroute_top_k and semroute_rerank: the k best of `candidates` for `query`.
  using RankCall = semroute_status* (*)(const semroute_model*, const char*, size_t, const char*, const uint64_t*,
                                        size_t, size_t, size_t*, float*, size_t*);
  std::vector<Match> ranked(std::string_view query, const std::vector<std::string_view>& candidates, size_t k,
                            RankCall call) const {
    const detail::Batch batch(candidates);
    std::vector<size_t> indices(k);
    std::vector<float> scores(k);
    size_t found = 0;
    detail::check(call(get(), query.data(), query.size(), batch.bytes.data(), batch.offsets.data(), candidates.size(),
                       k, indices.data(), scores.data(), &found));
    std::vector<Match> out(found);
    for (size_t i = 0; i < found; ++i) out[i] = {indices[i], scores[i]};
    return out;
  }
  detail::Owned<semroute_model, semroute_model_free> model_;
};

// One routed request (see semroute_router_route). Movable; strings are
// read from the C route, which is kept for RouterClient::store_answer.
class Route {
 public:
  std::string decision() const { return semroute_route_decision(get()); }
  double confidence() const { return semroute_route_confidence(get()); }
  bool blocked() const { return semroute_route_blocked(get()) != 0; }
  bool cache_hit() const { return semroute_route_cache_hit(get()) != 0; }
  // The decision asks for the model's answer to be checked: RouterClient::check_answer.
  bool check_answer() const { return semroute_route_check_answer(get()) != 0; }
  std::string model() const { return semroute_route_model(get()); }
  std::string request_json() const { return semroute_route_request_json(get()); }
  // The answer to return instead of calling a model (blocked, or from the cache); "" otherwise.
  std::string response_json() const {
    const char* r = semroute_route_response_json(get());
    return r != nullptr ? r : "";
  }
  std::vector<std::pair<std::string, std::string>> headers() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < semroute_route_header_count(get()); ++i)
      out.emplace_back(semroute_route_header_name(get(), i), semroute_route_header_value(get(), i));
    return out;
  }
  // Everything, with the trace, as JSON.
  std::string json() const { return semroute_route_json(get()); }
  const semroute_route* get() const { return route_.get(); }

 private:
  friend class RouterClient;
  explicit Route(semroute_route* route) : route_(route) {}
  detail::Owned<semroute_route, semroute_route_free> route_;
};

// One answer of the model runtime contract: the HTTP status, the JSON body,
// and its Server-Timing phases.
struct RuntimeReply {
  int status = 0;
  std::string body;
  std::string server_timing;
};

// The vLLM Semantic Router's model runtime contract in process
// (docs/runtime.md). (Named apart from the library's internal classes.)
// Add models first; call() is then safe from many threads.
class RuntimeClient {
 public:
  static RuntimeClient make(uint32_t max_bundle_tasks = 0, uint32_t max_queue = 0) {
    semroute_runtime* raw = nullptr;
    detail::check(semroute_runtime_create(max_bundle_tasks, max_queue, &raw));
    return RuntimeClient(raw);
  }
  void add_model(const std::string& name, const std::string& dir,
                 const semroute_model_params& params = semroute_model_default_params()) {
    detail::check(semroute_runtime_add_model(runtime_.get(), name.c_str(), dir.c_str(), &params));
  }
  // One task model of heads bound to the encoder at backbone_dir: {head name, task directory}, the first the primary.
  void add_heads(const std::string& name, const std::string& backbone_dir,
                 const std::vector<std::pair<std::string, std::string>>& heads,
                 const semroute_model_params& params = semroute_model_default_params()) {
    std::vector<const char*> names, dirs;
    for (const auto& [head, dir] : heads) {
      names.push_back(head.c_str());
      dirs.push_back(dir.c_str());
    }
    detail::check(semroute_runtime_add_heads(runtime_.get(), name.c_str(), backbone_dir.c_str(), heads.size(),
                                             names.data(), dirs.data(), &params));
  }
  // POST with a body, GET without (body empty and method "GET").
  RuntimeReply call(const std::string& path, std::string_view body = {}, const char* method = nullptr) const {
    semroute_runtime_reply* raw = nullptr;
    const char* verb = method != nullptr ? method : body.empty() ? "GET" : "POST";
    detail::check(semroute_runtime_call(runtime_.get(), verb, path.c_str(), body.empty() ? nullptr : body.data(),
                                        body.size(), &raw));
    const detail::Owned<semroute_runtime_reply, semroute_runtime_reply_free> owned(raw);
    size_t length = 0;
    const char* text = semroute_runtime_reply_body(raw, &length);
    return {semroute_runtime_reply_status(raw), std::string(text, length), semroute_runtime_reply_server_timing(raw)};
  }

 private:
  explicit RuntimeClient(semroute_runtime* r) : runtime_(r) {}
  detail::Owned<semroute_runtime, semroute_runtime_free> runtime_;
};

// A long prompt's skeleton (docs/compression.md).
struct PromptSkeleton {
  std::string text;
  bool reduced = false;  // false: the text fit and is `text`
  size_t tokens = 0;
  std::string language;                                // the stop-word list used, "" for none
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // byte ranges of the original kept
};

// Prompt compression. (Named apart from the library's internal classes, which
// a static link brings into the same program.) Safe from many threads.
class CompressorClient {
 public:
  static semroute_compress_params default_params() { return semroute_compress_default_params(); }
  static CompressorClient make(const semroute_compress_params& params = default_params()) {
    semroute_compressor* raw = nullptr;
    detail::check(semroute_compressor_new(&params, &raw));
    return CompressorClient(raw);
  }
  PromptSkeleton compress(std::string_view text) const {
    semroute_compressed* raw = nullptr;
    detail::check(semroute_compress(compressor_.get(), text.data(), text.size(), &raw));
    const detail::Owned<semroute_compressed, semroute_compressed_free> owned(raw);
    PromptSkeleton out;
    size_t length = 0;
    const char* skeleton = semroute_compressed_text(raw, &length);
    out.text.assign(skeleton, length);
    out.reduced = semroute_compressed_reduced(raw) != 0;
    out.tokens = semroute_compressed_tokens(raw);
    out.language = semroute_compressed_language(raw);
    size_t count = 0;
    const uint64_t* ranges = semroute_compressed_ranges(raw, &count);
    for (size_t i = 0; i < count; ++i) out.ranges.emplace_back(ranges[2 * i], ranges[2 * i + 1]);
    return out;
  }

 private:
  explicit CompressorClient(semroute_compressor* c) : compressor_(c) {}
  detail::Owned<semroute_compressor, semroute_compressor_free> compressor_;
};

struct UnsupportedSpan {
  uint64_t begin = 0, end = 0;  // bytes of the answer
  double score = 0;
  std::string nli_label;  // "" without an NLI model
  double entailment = 0, neutral = 0, contradiction = 0;
  int severity = 0;  // 0 low … 4 critical
};

struct CheckedSentence {
  uint64_t begin = 0, end = 0;  // bytes of the answer
  semroute_halluc_event event = SEMROUTE_HALLUC_OK;
  double max_score = 0;
  double latency_ms = 0;
  std::vector<UnsupportedSpan> spans;
};

namespace detail {

inline std::vector<CheckedSentence> checked(semroute_halluc_result* raw) {
  const Owned<semroute_halluc_result, semroute_halluc_result_free> owned(raw);
  std::vector<CheckedSentence> out;
  for (size_t i = 0; i < semroute_halluc_result_count(raw); ++i) {
    const semroute_halluc_sentence* c = semroute_halluc_result_sentence(raw, i);
    CheckedSentence s{c->begin, c->end, static_cast<semroute_halluc_event>(c->event), c->max_score, c->latency_ms, {}};
    for (size_t k = 0; k < c->span_count; ++k) {
      const semroute_halluc_span* p = c->spans[k];
      s.spans.push_back({p->begin, p->end, p->score, p->nli_label, p->entailment, p->neutral, p->contradiction,
                         p->severity});
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace detail

// An answer checked as it streams; one caller at a time.
class AnswerCheckStream {
 public:
  std::vector<CheckedSentence> feed(std::string_view chunk) {
    semroute_halluc_result* raw = nullptr;
    detail::check(semroute_halluc_stream_feed(stream_.get(), chunk.data(), chunk.size(), &raw));
    return detail::checked(raw);
  }
  std::vector<CheckedSentence> finish() {
    semroute_halluc_result* raw = nullptr;
    detail::check(semroute_halluc_stream_finish(stream_.get(), &raw));
    return detail::checked(raw);
  }

 private:
  friend class AnswerChecker;
  friend class RouterClient;
  explicit AnswerCheckStream(semroute_halluc_stream* s) : stream_(s) {}
  detail::Owned<semroute_halluc_stream, semroute_halluc_stream_free> stream_;
};

// Hallucination detection (docs/hallucination.md). Safe
// from many threads.
class AnswerChecker {
 public:
  static semroute_halluc_params default_params() { return semroute_halluc_default_params(); }
  static AnswerChecker load(const std::string& detector_dir, const semroute_halluc_params& params = default_params()) {
    semroute_halluc* raw = nullptr;
    detail::check(semroute_halluc_load(detector_dir.c_str(), &params, &raw));
    return AnswerChecker(raw);
  }
  std::vector<CheckedSentence> detect(std::string_view context, std::string_view question,
                                      std::string_view answer) const {
    semroute_halluc_result* raw = nullptr;
    detail::check(semroute_halluc_detect(checker_.get(), context.data(), context.size(), question.data(),
                                         question.size(), answer.data(), answer.size(), &raw));
    return detail::checked(raw);
  }
  // sse: the chunks are an OpenAI SSE stream's bytes; stop_severity 0: never stop.
  AnswerCheckStream open_stream(std::string_view context, std::string_view question, bool sse,
                                int stop_severity = 0) const {
    semroute_halluc_stream* raw = nullptr;
    detail::check(semroute_halluc_stream_open(checker_.get(), context.data(), context.size(), question.data(),
                                              question.size(), sse ? 1 : 0, stop_severity, &raw));
    return AnswerCheckStream(raw);
  }

 private:
  explicit AnswerChecker(semroute_halluc* c) : checker_(c) {}
  detail::Owned<semroute_halluc, semroute_halluc_free> checker_;
};

// The router from a YAML config (docs/router.md). (Named
// apart from the library's internal semroute::Router, which a static link
// brings into the same program.)
class RouterClient {
 public:
  static RouterClient load(const std::string& config_path) {
    semroute_router* router = nullptr;
    detail::check(semroute_router_load(config_path.c_str(), &router));
    return RouterClient(router);
  }
  // `metadata_json`: a JSON object of strings, or "" for none.
  Route route(std::string_view request_json, std::string_view metadata_json = {}) const {
    semroute_route* raw = nullptr;
    detail::check(semroute_router_route(get(), request_json.data(), request_json.size(),
                                        metadata_json.empty() ? nullptr : metadata_json.data(), metadata_json.size(),
                                        &raw));
    return Route(raw);
  }
  // After a cache miss: the model's answer for similar prompts. False when the
  // route had nothing to store.
  bool store_answer(const Route& route, std::string_view answer_json) const {
    int stored = 0;
    detail::check(semroute_router_store_answer(get(), route.get(), answer_json.data(), answer_json.size(), &stored));
    return stored != 0;
  }
  // A stream checking the model's answer to `route` (whose decision asked for
  // it: route.check_answer()) against `context`, or the request's tool messages.
  AnswerCheckStream check_answer(const Route& route, std::string_view context = {}, bool sse = false) const {
    semroute_halluc_stream* raw = nullptr;
    detail::check(semroute_router_check_answer(get(), route.get(), context.data(), context.size(), sse ? 1 : 0, &raw));
    return AnswerCheckStream(raw);
  }
  const semroute_router* get() const { return router_.get(); }

 private:
  explicit RouterClient(semroute_router* router) : router_(router) {}
  detail::Owned<semroute_router, semroute_router_free> router_;
};

}  // namespace semroute

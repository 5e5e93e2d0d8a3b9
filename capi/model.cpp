// Loading a model handle for its task, the facts about it, and tokenization.

#include <algorithm>
#include <cstring>

#include "core/device.h"
#include "core/model_config.h"
#include "core/runtime.h"
#include "handles.h"
#include "semroute/error.h"

using semroute::InvalidInput;

namespace semroute::capi {
namespace {

semroute_model_params defaults() {
  semroute_model_params p{};
  p.struct_size = sizeof(semroute_model_params);
  p.task = SEMROUTE_TASK_AUTO;
  p.truncation = SEMROUTE_KEEP_START;
  p.pooling = SEMROUTE_POOLING_DEFAULT;
  p.normalize = 1;
  p.merge_adapter = 1;
  return p;
}

}  // namespace

semroute_model_params effective_params(const semroute_model_params* given) {
  semroute_model_params p = defaults();
  return given == nullptr ? p : caller_struct(given, p, "semroute_model_params");
}

std::string string_or(const char* s, const char* fallback) { return s != nullptr ? s : fallback; }

LoadOptions load_options_of(const semroute_model_params& p) {
  const LoadOptions load = parse_load_options(string_or(p.device, "cpu"), string_or(p.dtype, "float32"));
  if (p.threads < 0) throw InvalidInput("threads must be >= 0");
  ensure_runtime_initialized();
  if (p.threads > 0) set_compute_threads(p.threads);
  return load;
}

namespace {

Keep keep_of(int32_t truncation) {
  switch (truncation) {
    case SEMROUTE_KEEP_START: return Keep::kStart;
    case SEMROUTE_KEEP_END: return Keep::kEnd;
    case SEMROUTE_KEEP_BOTH: return Keep::kStartAndEnd;
  }
  throw InvalidInput("unknown truncation " + std::to_string(truncation));
}

}  // namespace

PipelineOptions pipeline_options_of(const semroute_model_params& p) {
  PipelineOptions options;
  options.load = load_options_of(p);
  options.max_length = p.max_length;
  options.truncation = keep_of(p.truncation);
  if (p.overflow != SEMROUTE_OVERFLOW_TRUNCATE && p.overflow != SEMROUTE_OVERFLOW_REJECT)
    throw InvalidInput("unknown overflow " + std::to_string(p.overflow));
  options.overflow = p.overflow == SEMROUTE_OVERFLOW_REJECT ? Overflow::kReject : Overflow::kTruncate;
  if (p.count_input_tokens != 0 && p.count_input_tokens != 1) throw InvalidInput("count_input_tokens must be 0 or 1");
  options.count_input_tokens = p.count_input_tokens == 1;
  options.tokenizer = string_or(p.tokenizer, "");
  return options;
}

TaskOptions task_options_of(const semroute_model_params& p) {
  if (p.merge_adapter != 0 && p.merge_adapter != 1) throw InvalidInput("merge_adapter must be 0 or 1");
  TaskOptions options{pipeline_options_of(p)};
  options.adapter = string_or(p.adapter, "");
  options.merge_adapter = p.merge_adapter == 1;
  return options;
}

namespace {

std::optional<Pooling> pooling_of(int32_t pooling) {
  switch (pooling) {
    case SEMROUTE_POOLING_DEFAULT: return std::nullopt;
    case SEMROUTE_POOLING_MEAN: return Pooling::kMean;
    case SEMROUTE_POOLING_CLS: return Pooling::kCls;
    case SEMROUTE_POOLING_LAST_TOKEN: return Pooling::kLastToken;
  }
  throw InvalidInput("unknown pooling " + std::to_string(pooling));
}

semroute_task task_of(int32_t requested, const std::string& architecture) {
  if (requested < SEMROUTE_TASK_AUTO || requested > SEMROUTE_TASK_PAIR_SCORING)
    throw InvalidInput("unknown task " + std::to_string(requested));
  if (requested != SEMROUTE_TASK_AUTO) return static_cast<semroute_task>(requested);
  const auto kind = task_kind_of(architecture);
  if (!kind) return SEMROUTE_TASK_EMBEDDING;
  return *kind == TaskKind::kSequence ? SEMROUTE_TASK_SEQUENCE_CLASSIFICATION : SEMROUTE_TASK_TOKEN_CLASSIFICATION;
}

const char* task_name(semroute_task task) {
  switch (task) {
    case SEMROUTE_TASK_SEQUENCE_CLASSIFICATION: return "sequence classification";
    case SEMROUTE_TASK_TOKEN_CLASSIFICATION: return "token classification";
    case SEMROUTE_TASK_EMBEDDING: return "embedding";
    case SEMROUTE_TASK_ENCODER: return "encoder";
    case SEMROUTE_TASK_PAIR_SCORING: return "pair scoring";
    case SEMROUTE_TASK_AUTO: break;
  }
  return "auto";
}

void add_batcher(semroute_model& model, const BatchingOptions& batching) {
  check_batching(batching);
  if (!batching.enabled()) return;
  if (auto sequence = model.sequence) {
    model.sequence_batcher = std::make_unique<Batcher<Classification>>(
        [sequence](const std::vector<std::string_view>& texts) { return sequence->classify(texts); }, batching,
        estimated_tokens);
  } else if (auto token = model.token) {
    model.token_batcher = std::make_unique<Batcher<TokenClassification>>(
        [token](const std::vector<std::string_view>& texts) { return token->classify(texts); }, batching,
        estimated_tokens);
  } else if (auto embedder = model.embedder) {
    model.embed_batcher = std::make_unique<Batcher<std::vector<float>>>(
        [embedder](const std::vector<std::string_view>& texts) {
          const std::vector<float> rows = embedder->embed_rows(texts);
          const size_t dim = rows.size() / texts.size();
          std::vector<std::vector<float>> out;
          for (size_t i = 0; i < texts.size(); ++i) out.emplace_back(rows.begin() + i * dim, rows.begin() + (i + 1) * dim);
          return out;
        },
        batching, estimated_tokens);
  }
}

std::unique_ptr<semroute_model> load_model(const std::filesystem::path& dir, const semroute_model_params& p) {
  const ConfigReader config = read_model_config(dir);
  auto model = std::make_unique<semroute_model>();
  model->model_type = config.get_string("model_type", "");
  const auto architectures = config.get_strings("architectures");
  model->architecture = architectures.empty() ? "" : architectures.front();
  model->task = task_of(p.task, model->architecture);

  const TaskOptions task_options = task_options_of(p);
  if (model->task == SEMROUTE_TASK_PAIR_SCORING) {
    if (!task_options.adapter.empty()) throw InvalidInput("a pair scorer takes no adapter");
    PairScorerOptions options;
    static_cast<PipelineOptions&>(options) = task_options;
    options.layer = p.layer;
    options.dimension = p.dimension;
    model->pair_scorer = PairScorer::load(dir, options);
  } else if (model->task == SEMROUTE_TASK_ENCODER) {
    if (!task_options.adapter.empty()) throw InvalidInput("an adapter needs a task: load the encoder without it");
    model->backbone = Backbone::load(dir, task_options);
    model->backbone_encode = encode_options_for(*model->backbone.encoder, task_options);
  } else if (model->task == SEMROUTE_TASK_EMBEDDING) {
    EmbedderOptions options{task_options};
    options.pooling = pooling_of(p.pooling);
    if (p.normalize != 0 && p.normalize != 1) throw InvalidInput("normalize must be 0 or 1");
    options.normalize = p.normalize == 1;
    options.dimension = p.dimension;
    options.layer = p.layer;
    options.prompt = string_or(p.prompt, "");
    model->embedder = Embedder::load(dir, options);
  } else if (model->task == SEMROUTE_TASK_SEQUENCE_CLASSIFICATION) {
    model->sequence = SequenceClassifier::load(dir, task_options);
  } else {
    model->token = TokenClassifier::load(dir, task_options);
  }
  add_batcher(*model, BatchingOptions{p.max_batch, p.max_wait_us});
  return model;
}

std::unique_ptr<semroute_model> bind_head(const semroute_model& source, const std::filesystem::path& head_dir,
                                          const semroute_model_params& p) {
  const Backbone backbone = source.bindable_backbone();
  const ConfigReader config = read_model_config(head_dir);
  auto model = std::make_unique<semroute_model>();
  model->model_type = source.model_type;
  const auto architectures = config.get_strings("architectures");
  model->architecture = architectures.empty() ? "" : architectures.front();
  model->task = task_of(p.task, model->architecture);
  if (p.adapter != nullptr) throw InvalidInput("a bound head takes no adapter");
  const PipelineOptions options = pipeline_options_of(p);
  if (model->task == SEMROUTE_TASK_SEQUENCE_CLASSIFICATION)
    model->sequence = SequenceClassifier::bind(backbone, head_dir, options);
  else if (model->task == SEMROUTE_TASK_TOKEN_CLASSIFICATION)
    model->token = TokenClassifier::bind(backbone, head_dir, options);
  else
    throw InvalidInput(std::string("a bound head is a sequence or token classifier, not ") + task_name(model->task) +
                       " (" + head_dir.string() + ": set params.task)");
  add_batcher(*model, BatchingOptions{p.max_batch, p.max_wait_us});
  return model;
}

const CoreModel* encoder_of(const semroute_model* model) {
  if (model == nullptr) return nullptr;
  if (model->sequence) return model->sequence->task().encoder.get();
  if (model->token) return model->token->task().encoder.get();
  if (model->embedder) return &model->embedder->encoder();
  if (model->pair_scorer) return model->pair_scorer->encoder().get();
  return model->backbone.encoder.get();
}

}  // namespace

const semroute_model& model_for(const semroute_model* model, semroute_task task, const char* call) {
  require(model, "model");
  if (model->task != task)
    throw InvalidInput(std::string(call) + " needs a " + task_name(task) + " model; this one was loaded for " +
                       task_name(model->task));
  // Callers' threads (a Go program's especially) may never have run libtorch
  // work: give this one the process-wide thread count before any BLAS call.
  prepare_calling_thread();
  return *model;
}

std::string_view text_view(const char* text, size_t length, const char* what) {
  if (text == nullptr && length != 0) throw InvalidInput(std::string(what) + " is NULL with a nonzero length");
  return length == 0 ? std::string_view() : std::string_view(text, length);
}

std::vector<std::string_view> batch_views(const char* texts, const uint64_t* offsets, size_t count,
                                          const char* what) {
  std::vector<std::string_view> views;
  if (count == 0) return views;
  require(offsets, "offsets");
  if (count > kMaxBatchTexts)
    throw InvalidInput(std::string(what) + ": " + std::to_string(count) + " texts in one call exceeds the limit of " +
                       std::to_string(kMaxBatchTexts));
  views.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (offsets[i + 1] < offsets[i])
      throw InvalidInput(std::string(what) + ": offsets must not decrease (offsets[" + std::to_string(i + 1) + "])");
    const size_t length = static_cast<size_t>(offsets[i + 1] - offsets[i]);
    if (length == 0) {
      views.emplace_back();
      continue;
    }
    require(texts, what);
    views.emplace_back(texts + offsets[i], length);
  }
  return views;
}

std::vector<TextPair> pair_views(const char* firsts, const uint64_t* first_offsets, const char* seconds,
                                 const uint64_t* second_offsets, size_t count, const char* first_name,
                                 const char* second_name) {
  const auto a = batch_views(firsts, first_offsets, count, first_name);
  const auto b = batch_views(seconds, second_offsets, count, second_name);
  std::vector<TextPair> pairs;
  for (size_t i = 0; i < count; ++i) pairs.emplace_back(a[i], b[i]);
  return pairs;
}

}  // namespace semroute::capi

std::vector<semroute::Classification> semroute_model::classify(const std::vector<std::string_view>& texts) const {
  return sequence_batcher ? (*sequence_batcher)(texts) : sequence->classify(texts);
}

std::vector<semroute::TokenClassification> semroute_model::classify_tokens(
    const std::vector<std::string_view>& texts) const {
  return token_batcher ? (*token_batcher)(texts) : token->classify(texts);
}

std::vector<float> semroute_model::embed_rows(const std::vector<std::string_view>& texts) const {
  if (!embed_batcher) return embedder->embed_rows(texts);
  std::vector<float> rows;
  for (const auto& row : (*embed_batcher)(texts)) rows.insert(rows.end(), row.begin(), row.end());
  return rows;
}

const semroute::Tokenizer& semroute_model::tokenizer() const {
  if (sequence) return *sequence->task().tokenizer;
  if (token) return *token->task().tokenizer;
  if (embedder) return *embedder->tokenizer();
  if (pair_scorer) return pair_scorer->tokenizer();
  if (!backbone.tokenizer) throw InvalidInput("this encoder was loaded without a tokenizer.json");
  return *backbone.tokenizer;
}

const semroute::EncodeOptions& semroute_model::encode_options() const {
  if (sequence) return sequence->task().encode;
  if (token) return token->task().encode;
  if (embedder) return embedder->encode_options();
  if (pair_scorer) return pair_scorer->encode_options();
  return backbone_encode;
}

semroute::Backbone semroute_model::bindable_backbone() const {
  if (sequence) return sequence->task().backbone();
  if (token) return token->task().backbone();
  if (backbone.encoder) return backbone;
  throw InvalidInput("heads are bound to an encoder, a sequence or a token classifier, not an embedding model");
}

const std::vector<std::string>& semroute_model::labels() const {
  static const std::vector<std::string> none;
  if (sequence) return sequence->labels();
  if (token) return token->labels();
  return none;
}

using namespace semroute::capi;

namespace {

semroute_status* tokenize(const semroute_model* model, const char* text, size_t length, int add_special_tokens,
                          bool whole, semroute_tokens** out_tokens) {
  if (out_tokens != nullptr) *out_tokens = nullptr;
  return guarded([&] {
    require(model, "model");
    require(out_tokens, "out_tokens");
    semroute::EncodeOptions options = model->encode_options();
    options.add_special_tokens = add_special_tokens != 0;
    if (whole) options.max_length = 0;
    auto tokens = std::make_unique<semroute_tokens>();
    tokens->encoding = model->tokenizer().encode(text_view(text, length, "text"), options);
    for (const auto& span : tokens->encoding.offsets) {
      tokens->offsets.push_back(span.begin);
      tokens->offsets.push_back(span.end);
    }
    *out_tokens = tokens.release();
  });
}

}  // namespace

extern "C" {

semroute_model_params semroute_model_default_params(void) { return defaults(); }

semroute_status* semroute_model_load(const char* path, const semroute_model_params* params,
                                     semroute_model** out_model) {
  if (out_model != nullptr) *out_model = nullptr;
  return guarded_load([&] {
    require(path, "path");
    require(out_model, "out_model");
    *out_model = load_model(path, effective_params(params)).release();
  });
}

semroute_status* semroute_model_bind_head(const semroute_model* source, const char* head_dir,
                                          const semroute_model_params* params, semroute_model** out_model) {
  if (out_model != nullptr) *out_model = nullptr;
  return guarded_load([&] {
    require(source, "source");
    require(head_dir, "head_dir");
    require(out_model, "out_model");
    *out_model = bind_head(*source, head_dir, effective_params(params)).release();
  });
}

int semroute_model_shares_encoder(const semroute_model* a, const semroute_model* b) {
  const auto* encoder = encoder_of(a);
  return encoder != nullptr && encoder == encoder_of(b) ? 1 : 0;
}

void semroute_model_free(semroute_model* model) { delete model; }

semroute_task semroute_model_task(const semroute_model* model) {
  return model != nullptr ? model->task : SEMROUTE_TASK_AUTO;
}

const char* semroute_model_type(const semroute_model* model) {
  return model != nullptr ? model->model_type.c_str() : "";
}

const char* semroute_model_architecture(const semroute_model* model) {
  return model != nullptr ? model->architecture.c_str() : "";
}

size_t semroute_model_hidden_size(const semroute_model* model) {
  const auto* encoder = encoder_of(model);
  return encoder != nullptr ? static_cast<size_t>(encoder->hidden_size()) : 0;
}

size_t semroute_model_max_length(const semroute_model* model) {
  return model != nullptr ? model->encode_options().max_length : 0;
}

size_t semroute_model_num_labels(const semroute_model* model) {
  return model != nullptr ? model->labels().size() : 0;
}

int semroute_model_multi_label(const semroute_model* model) {
  return model != nullptr && model->sequence && model->sequence->scoring() == semroute::Scoring::kSigmoid ? 1 : 0;
}

const char* semroute_model_label(const semroute_model* model, size_t i) {
  if (model == nullptr || i >= model->labels().size()) return nullptr;
  return model->labels()[i].c_str();
}

size_t semroute_model_embedding_dim(const semroute_model* model) {
  return model != nullptr && model->embedder ? static_cast<size_t>(model->embedder->dimension()) : 0;
}

semroute_status* semroute_tokenize(const semroute_model* model, const char* text, size_t length,
                                   int add_special_tokens, semroute_tokens** out_tokens) {
  return tokenize(model, text, length, add_special_tokens, false, out_tokens);
}

semroute_status* semroute_tokenize_whole(const semroute_model* model, const char* text, size_t length,
                                         int add_special_tokens, semroute_tokens** out_tokens) {
  return tokenize(model, text, length, add_special_tokens, true, out_tokens);
}

size_t semroute_tokens_count(const semroute_tokens* tokens) {
  return tokens != nullptr ? tokens->encoding.size() : 0;
}

const int32_t* semroute_tokens_ids(const semroute_tokens* tokens) {
  return tokens != nullptr ? tokens->encoding.ids.data() : nullptr;
}

const uint64_t* semroute_tokens_offsets(const semroute_tokens* tokens) {
  return tokens != nullptr ? tokens->offsets.data() : nullptr;
}

const char* semroute_tokens_token(const semroute_tokens* tokens, size_t i) {
  if (tokens == nullptr || i >= tokens->encoding.tokens.size()) return nullptr;
  return tokens->encoding.tokens[i].c_str();
}

void semroute_tokens_free(semroute_tokens* tokens) { delete tokens; }

}  // extern "C"

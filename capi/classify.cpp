// Sequence classification (label, confidence, probabilities) and token
// classification (entity spans and per-token labels) through the C API.
#include "handles.h"
#include "tasks/text_batch.h"

using namespace semroute::capi;

namespace {

const semroute::SequenceClassifier& sequence_classifier(const semroute_model* model, const char* call) {
  return *model_for(model, SEMROUTE_TASK_SEQUENCE_CLASSIFICATION, call).sequence;
}

const semroute::TokenClassifier& token_classifier(const semroute_model* model, const char* call) {
  return *model_for(model, SEMROUTE_TASK_TOKEN_CLASSIFICATION, call).token;
}

semroute_classifications* classifications(std::vector<semroute::Classification> items) {
  auto results = std::make_unique<semroute_classifications>();
  for (const auto& c : items) results->inputs.push_back(input_usage_of(c.input));
  results->items = std::move(items);
  return results.release();
}

// C views over `items`, which must not move afterwards.
semroute_token_results* token_results(std::vector<semroute::TokenClassification> items) {
  auto results = std::make_unique<semroute_token_results>();
  results->items = std::move(items);
  for (const auto& item : results->items) {
    auto& entities = results->entities.add();
    for (const auto& e : item.entities) entities.push_back(entity_of(e));
    results->inputs.push_back(input_usage_of(item.input));
    auto& tokens = results->tokens.add();
    for (const auto& t : item.tokens)
      tokens.push_back({sizeof(semroute_token_label), t.token_id, static_cast<int32_t>(t.label_id), t.label.c_str(),
                        t.offset.begin, t.offset.end, t.probability});
  }
  results->entities.seal();
  results->tokens.seal();
  return results.release();
}

const semroute::Classification* item(const semroute_classifications* results, size_t i) {
  return results != nullptr && i < results->items.size() ? &results->items[i] : nullptr;
}

semroute::WindowOptions window_options_of(const semroute_window_options* options) {
  const auto given = options == nullptr ? semroute_window_default_options()
                                        : caller_struct(options, semroute_window_default_options(), "options");
  semroute::WindowOptions chosen;
  chosen.size = given.size;
  chosen.overlap = given.overlap;
  chosen.max_document_tokens = given.max_document_tokens;
  return chosen;
}

}  // namespace

semroute_entity semroute::capi::entity_of(const semroute::EntitySpan& e) {
  return {sizeof(semroute_entity), e.type.c_str(), e.begin, e.end, e.text.c_str(), e.text.size(), e.score};
}

extern "C" {

semroute_status* semroute_classify(const semroute_model* model, const char* text, size_t length,
                                   semroute_classifications** out) {
  const uint64_t offsets[2] = {0, length};
  return semroute_classify_batch(model, text, offsets, 1, out);
}

semroute_status* semroute_classify_batch(const semroute_model* model, const char* texts, const uint64_t* offsets,
                                         size_t count, semroute_classifications** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    sequence_classifier(model, "semroute_classify");
    require(out, "out");
    const auto views = batch_views(texts, offsets, count, "texts");
    *out = classifications(views.empty() ? std::vector<semroute::Classification>() : model->classify(views));
  });
}

semroute_status* semroute_classify_pairs(const semroute_model* model, const char* firsts,
                                         const uint64_t* first_offsets, const char* seconds,
                                         const uint64_t* second_offsets, size_t count,
                                         semroute_classifications** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    const auto& classifier = sequence_classifier(model, "semroute_classify_pairs");
    require(out, "out");
    const auto pairs = pair_views(firsts, first_offsets, seconds, second_offsets, count, "firsts", "seconds");
    *out = classifications(pairs.empty() ? std::vector<semroute::Classification>() : classifier.classify_pairs(pairs));
  });
}

size_t semroute_classifications_count(const semroute_classifications* results) {
  return results != nullptr ? results->items.size() : 0;
}

int32_t semroute_classifications_class_id(const semroute_classifications* results, size_t i) {
  const auto* c = item(results, i);
  return c != nullptr ? static_cast<int32_t>(c->class_id) : -1;
}

const char* semroute_classifications_label(const semroute_classifications* results, size_t i) {
  const auto* c = item(results, i);
  return c != nullptr ? c->label.c_str() : nullptr;
}

float semroute_classifications_confidence(const semroute_classifications* results, size_t i) {
  const auto* c = item(results, i);
  return c != nullptr ? c->confidence : 0.0f;
}

const float* semroute_classifications_probabilities(const semroute_classifications* results, size_t i,
                                                    size_t* out_count) {
  const auto* c = item(results, i);
  if (out_count != nullptr) *out_count = c != nullptr ? c->probabilities.size() : 0;
  return c != nullptr ? c->probabilities.data() : nullptr;
}

const semroute_input_usage* semroute_classifications_input(const semroute_classifications* results, size_t i) {
  return results != nullptr && i < results->inputs.size() ? &results->inputs[i] : nullptr;
}

void semroute_classifications_free(semroute_classifications* results) { delete results; }

semroute_window_options semroute_window_default_options(void) {
  semroute_window_options o{};
  o.struct_size = sizeof o;
  return o;
}

semroute_status* semroute_classify_windows(const semroute_model* model, const char* text, size_t length,
                                           const semroute_window_options* options, semroute_windows** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    const auto& classifier = sequence_classifier(model, "semroute_classify_windows");
    require(out, "out");
    auto windows = std::make_unique<semroute_windows>();
    windows->document = classifier.classify_windows(text_view(text, length, "text"), window_options_of(options));
    for (const auto& w : windows->document.windows) {
      const auto& c = w.classification;
      windows->views.push_back({sizeof(semroute_window), w.tokens.begin, w.tokens.end, w.byte_begin, w.byte_end,
                                static_cast<int32_t>(c.class_id), c.label.c_str(), c.confidence,
                                c.probabilities.data(), c.probabilities.size()});
    }
    *out = windows.release();
  });
}

size_t semroute_windows_count(const semroute_windows* windows) {
  return windows != nullptr ? windows->views.size() : 0;
}

const semroute_window* semroute_windows_window(const semroute_windows* windows, size_t i) {
  return windows != nullptr && i < windows->views.size() ? &windows->views[i] : nullptr;
}

uint64_t semroute_windows_content_tokens(const semroute_windows* windows) {
  return windows != nullptr ? windows->document.content_tokens : 0;
}

void semroute_windows_free(semroute_windows* windows) { delete windows; }

semroute_status* semroute_token_classify_windows(const semroute_model* model, const char* text, size_t length,
                                                 const semroute_window_options* options, semroute_token_results** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    const auto& classifier = token_classifier(model, "semroute_token_classify_windows");
    require(out, "out");
    auto document = classifier.classify_windows(text_view(text, length, "text"), window_options_of(options));
    std::vector<semroute::TokenClassification> items;
    items.push_back(std::move(document.result));
    auto results = std::unique_ptr<semroute_token_results>(token_results(std::move(items)));
    for (const auto& w : document.windows) results->windows.insert(results->windows.end(), {w.begin, w.end});
    results->content_tokens = document.content_tokens;
    *out = results.release();
  });
}

semroute_status* semroute_token_classify(const semroute_model* model, const char* text, size_t length,
                                         semroute_token_results** out) {
  const uint64_t offsets[2] = {0, length};
  return semroute_token_classify_batch(model, text, offsets, 1, out);
}

semroute_status* semroute_token_classify_batch(const semroute_model* model, const char* texts,
                                               const uint64_t* offsets, size_t count,
                                               semroute_token_results** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    token_classifier(model, "semroute_token_classify");
    require(out, "out");
    const auto views = batch_views(texts, offsets, count, "texts");
    *out = token_results(views.empty() ? std::vector<semroute::TokenClassification>() : model->classify_tokens(views));
  });
}

const uint64_t* semroute_token_results_windows(const semroute_token_results* results, size_t* out_count,
                                               uint64_t* out_content_tokens) {
  const bool has = results != nullptr && !results->windows.empty();
  if (out_count != nullptr) *out_count = has ? results->windows.size() / 2 : 0;
  if (out_content_tokens != nullptr) *out_content_tokens = has ? results->content_tokens : 0;
  return has ? results->windows.data() : nullptr;
}

size_t semroute_token_results_count(const semroute_token_results* results) {
  return results != nullptr ? results->items.size() : 0;
}

const semroute_entity* const* semroute_token_results_entities(const semroute_token_results* results, size_t i,
                                                              size_t* out_count) {
  if (results == nullptr) return CLists<semroute_entity>().at(0, out_count);
  return results->entities.at(i, out_count);
}

const semroute_token_label* const* semroute_token_results_tokens(const semroute_token_results* results, size_t i,
                                                                 size_t* out_count) {
  if (results == nullptr) return CLists<semroute_token_label>().at(0, out_count);
  return results->tokens.at(i, out_count);
}

const semroute_input_usage* semroute_token_results_input(const semroute_token_results* results, size_t i) {
  return results != nullptr && i < results->inputs.size() ? &results->inputs[i] : nullptr;
}

void semroute_token_results_free(semroute_token_results* results) { delete results; }

}  // extern "C"

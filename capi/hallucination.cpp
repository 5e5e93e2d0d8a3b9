// Hallucination detection through the C API (src/hallucination/): whole
// answers and streams.
#include "hallucination/answer_stream.h"
#include "handles.h"

using namespace semroute::capi;
using semroute::InvalidInput;

struct semroute_halluc {
  std::shared_ptr<const semroute::HallucinationDetector> detector;
};

struct semroute_halluc_result {
  struct Sentence {
    semroute::SentenceCheck check;
    semroute::StreamEventKind event;
  };
  std::vector<Sentence> items;
  // C views of items, built once items is final.
  std::vector<semroute_halluc_sentence> sentences;
  CLists<semroute_halluc_span> spans;
};

namespace {

semroute_halluc_result* result_of(std::vector<semroute::StreamEvent> events) {
  auto result = std::make_unique<semroute_halluc_result>();
  for (auto& e : events) result->items.push_back({std::move(e.check), e.kind});
  for (const auto& item : result->items) {
    auto& spans = result->spans.add();
    for (const auto& s : item.check.spans)
      spans.push_back({sizeof(semroute_halluc_span), s.begin, s.end, s.score, s.nli.label.c_str(), s.nli.entailment,
                       s.nli.neutral, s.nli.contradiction, s.severity});
  }
  result->spans.seal();
  for (size_t i = 0; i < result->items.size(); ++i) {
    const auto& c = result->items[i].check;
    size_t count = 0;
    const semroute_halluc_span* const* spans = result->spans.at(i, &count);
    result->sentences.push_back({sizeof(semroute_halluc_sentence), c.begin, c.end,
                                 static_cast<int32_t>(result->items[i].event), c.max_score,
                                 static_cast<double>(c.latency.count()) / 1000.0, count, spans});
  }
  return result.release();
}

semroute::DetectorTemplate template_of(const char* name) {
  const std::string n = string_or(name, "lettucedetect");
  if (n == "lettucedetect") return semroute::DetectorTemplate::kLettuceDetect;
  if (n == "halugate") return semroute::DetectorTemplate::kHaluGate;
  throw InvalidInput("input_template: expected lettucedetect or halugate, not '" + n + "'");
}

}  // namespace

extern "C" {

semroute_halluc_params semroute_halluc_default_params(void) {
  const semroute::DetectorOptions d;
  return {sizeof(semroute_halluc_params),
          nullptr,
          nullptr,
          d.threshold,
          static_cast<uint32_t>(d.min_span_words),
          d.min_span_score,
          static_cast<uint32_t>(d.context_windows),
          static_cast<uint32_t>(d.window_overlap),
          static_cast<uint32_t>(d.answer_tokens),
          static_cast<uint32_t>(d.answer_context_bytes),
          static_cast<uint32_t>(d.max_sentence_bytes),
          d.nli_filter ? 1 : 0,
          d.nli_entailment_threshold,
          d.nli_confidence,
          nullptr};
}

semroute_status* semroute_halluc_load(const char* detector_model, const semroute_halluc_params* params,
                                      semroute_halluc** out) {
  if (out != nullptr) *out = nullptr;
  return guarded_load([&] {
    require(detector_model, "detector_model");
    require(out, "out");
    const semroute_halluc_params p = params ? caller_struct(params, semroute_halluc_default_params(),
                                                            "semroute_halluc_params")
                                            : semroute_halluc_default_params();
    semroute::DetectorOptions o;
    o.input_template = template_of(p.input_template);
    o.threshold = p.threshold;
    o.min_span_words = p.min_span_words;
    o.min_span_score = p.min_span_score;
    o.context_windows = p.context_windows;
    o.window_overlap = p.window_overlap;
    o.answer_tokens = p.answer_tokens;
    o.answer_context_bytes = p.answer_context_bytes;
    o.max_sentence_bytes = p.max_sentence_bytes;
    o.nli_filter = p.nli_filter != 0;
    o.nli_entailment_threshold = p.nli_entailment_threshold;
    o.nli_confidence = p.nli_confidence;
    const semroute_model_params model = effective_params(p.model);
    auto handle = std::make_unique<semroute_halluc>();
    handle->detector = semroute::HallucinationDetector::load(detector_model, string_or(p.nli_model, ""), o,
                                                             pipeline_options_of(model));
    *out = handle.release();
  });
}

void semroute_halluc_free(semroute_halluc* detector) { delete detector; }

semroute_status* semroute_halluc_detect(const semroute_halluc* detector, const char* context, size_t context_len,
                                        const char* question, size_t question_len, const char* answer,
                                        size_t answer_len, semroute_halluc_result** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(detector, "detector");
    require(out, "out");
    semroute::DetectionResult result =
        semroute::detect(detector->detector, text_view(context, context_len, "context"),
                         text_view(question, question_len, "question"), text_view(answer, answer_len, "answer"));
    std::vector<semroute::StreamEvent> events;
    for (auto& check : result.sentences) {
      const semroute::StreamEventKind kind = semroute::event_kind(check, 0);
      events.push_back({kind, std::move(check)});
    }
    *out = result_of(std::move(events));
  });
}

semroute_status* semroute_halluc_stream_open(const semroute_halluc* detector, const char* context,
                                             size_t context_len, const char* question, size_t question_len, int sse,
                                             int stop_severity, semroute_halluc_stream** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(detector, "detector");
    require(out, "out");
    const auto& d = detector->detector;
    semroute::StreamOptions options;
    options.format = sse ? semroute::StreamFormat::kSse : semroute::StreamFormat::kText;
    options.stop_severity = stop_severity;
    auto handle = std::make_unique<semroute_halluc_stream>();
    handle->stream = std::make_unique<semroute::AnswerStream>(
        d, d->pin(text_view(context, context_len, "context"), text_view(question, question_len, "question")),
        options);
    *out = handle.release();
  });
}

semroute_status* semroute_halluc_stream_feed(semroute_halluc_stream* stream, const char* chunk, size_t length,
                                             semroute_halluc_result** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(stream, "stream");
    require(out, "out");
    *out = result_of(stream->stream->feed(text_view(chunk, length, "chunk")));
  });
}

semroute_status* semroute_halluc_stream_finish(semroute_halluc_stream* stream, semroute_halluc_result** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(stream, "stream");
    require(out, "out");
    *out = result_of(stream->stream->finish());
  });
}

void semroute_halluc_stream_free(semroute_halluc_stream* stream) { delete stream; }

size_t semroute_halluc_result_count(const semroute_halluc_result* result) {
  return result ? result->sentences.size() : 0;
}

const semroute_halluc_sentence* semroute_halluc_result_sentence(const semroute_halluc_result* result, size_t i) {
  return result && i < result->sentences.size() ? &result->sentences[i] : nullptr;
}

void semroute_halluc_result_free(semroute_halluc_result* result) { delete result; }

}  // extern "C"

// Every answer as JSON, one way: what `semroute … --json` prints and what
// `semroute serve` sends (the same keys, so a client can switch between them).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "classifiers/unified_classifier.h"
#include "compression/prompt_compressor.h"
#include "hallucination/answer_stream.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"

namespace semroute {

// {input_tokens, processed_tokens, truncated}
nlohmann::json input_json(const InputUsage& usage);
// {text, label, class_id, confidence, probabilities{label: p}, input[, multi_label: true]}
nlohmann::json classification_json(std::string_view text, const Classification& r,
                                   const std::vector<std::string>& labels, Scoring scoring);
// {type, begin, end, text, score}: byte offsets into the text.
nlohmann::json entity_json(const EntitySpan& e);
// {text, tokens[{id, token, begin, end, label, probability}], entities[], input}
nlohmann::json token_result_json(std::string_view text, const TokenClassification& r);
// {text, content_tokens, windows[classification + token_begin, token_end, begin, end]}
nlohmann::json windows_json(std::string_view text, const DocumentClassification& d,
                            const std::vector<std::string>& labels, Scoring scoring);
// One unified-classifier task: {task, path, reason, latency_ms[, error, error_code]} and
// the sequence (label, confidence, probabilities, risk, flagged) or token
// (entities, has_entities) answer.
nlohmann::json task_answer_json(const TaskAnswer& a, const std::vector<std::string>& labels);
// One judged sentence of an answer: {event (ok, warn, stop), begin, end,
// text, max_score, latency_ms, spans[{begin, end, text, score, severity[, nli]}]}.
nlohmann::json stream_event_json(const StreamEvent& e);
// {text, compressed, tokens, bytes, language, units, units_kept, ranges[[begin, end]]}
nlohmann::json compressed_json(const CompressedText& c, size_t original_bytes);

}  // namespace semroute

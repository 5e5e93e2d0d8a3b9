// The owned-instance interface's inference calls, each a conversion of
// semroute's answer into upstream's JSON value (field names, byte offsets,
// the validation upstream applies before answering).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "candle_instance.h"
#include "instances.h"
#include "support.h"

using namespace candle::instances;
using candle::char_end;
using candle::char_start;

namespace {

using Instance = candle::instances::Instance;

// Upstream refuses a score vector it would not trust: non-finite, outside
// [0, 1], of the wrong length, or (a distribution) not summing to 1.
void check_scores(const std::vector<float>& scores, size_t labels, bool distribution) {
  double sum = 0;
  for (float s : scores) {
    if (!std::isfinite(s) || s < 0 || s > 1) throw InstanceError("result_invalid", "a score is outside [0, 1]");
    sum += s;
  }
  if (scores.size() != labels) throw InstanceError("result_invalid", "scores and labels differ in length");
  if (distribution && std::abs(sum - 1.0) > 1e-4) throw InstanceError("result_invalid", "probabilities do not sum to 1");
}

bool is_blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

json distribution_json(const Instance& inst, const semroute::Prediction& p) {
  check_scores(p.probabilities, inst.labels.size(), true);
  return {{"class", p.class_id},
          {"confidence", p.confidence},
          {"probabilities", p.probabilities},
          {"labels", inst.labels},
          {"input", input_json(p.input)}};
}

// A whole document read in windows: every token read once at least, nothing cut.
json window_input(const Instance& inst, uint64_t content_tokens) {
  const uint64_t tokens = content_tokens + inst.special_tokens;
  return input_json({tokens, tokens, false});
}

// Windows: `size` tokens with the special tokens (1..max_input_tokens),
// `overlap` content tokens; the document within its own budget.
semroute_window_options window_options(const Instance& inst, size_t size, size_t overlap) {
  if (size == 0) throw InstanceError("configuration", "window size must be positive");
  if (size > inst.max_input_tokens)
    throw InstanceError("input_limit", "window size " + std::to_string(size) + " exceeds the input budget " +
                                           std::to_string(inst.max_input_tokens));
  if (overlap >= size) throw InstanceError("configuration", "window overlap must be smaller than its size");
  semroute_window_options o = semroute_window_default_options();
  o.size = static_cast<uint32_t>(size);
  o.overlap = static_cast<uint32_t>(overlap);
  o.max_document_tokens = inst.document_max_input_tokens > inst.special_tokens
                              ? inst.document_max_input_tokens - inst.special_tokens
                              : 1;
  return o;
}

json classify_windows(uint64_t handle, const char* text, size_t size, size_t overlap, const char* task,
                      const char* field) {
  const auto inst = find_instance(handle);
  inst->require_task(task);
  const std::string_view document = text_arg(text);
  const semroute_window_options options = window_options(*inst, size, overlap);
  semroute_windows* raw = nullptr;
  semroute::detail::check(
      semroute_classify_windows(inst->model->get(), document.data(), document.size(), &options, &raw));
  const semroute::detail::Owned<semroute_windows, semroute_windows_free> windows(raw);
  json out = json::array();
  const bool distribution = std::string(field) == "probabilities";
  for (size_t i = 0; i < semroute_windows_count(raw); ++i) {
    const semroute_window* w = semroute_windows_window(raw, i);
    const std::vector<float> scores(w->probabilities, w->probabilities + w->num_labels);
    check_scores(scores, inst->labels.size(), distribution);
    out.push_back({{"start", w->token_begin}, {"end", w->token_end}, {field, scores}});
  }
  const uint64_t content = semroute_windows_content_tokens(raw);
  return {{"windows", out}, {"labels", inst->labels}, {"content_tokens", content}, {"input", window_input(*inst, content)}};
}

std::string_view strip_bio(std::string_view label, char* prefix) {
  *prefix = 0;
  if (label.size() > 2 && (label[0] == 'B' || label[0] == 'I') && label[1] == '-') {
    *prefix = label[0];
    label.remove_prefix(2);
  }
  return label;
}

// Upstream's spans: a token labelled O (or class 0) is outside; "B-X" starts
// a span, "I-X" extends the span of X its previous token is in (else starts
// one); any other label is a span of its own token. Only tokens in the bytes
// [begin, end) count, with offsets relative to begin; zero-width tokens are
// dropped. A span's confidence is its tokens' highest.
json spans_json(std::string_view text, const std::vector<semroute::LabeledToken>& tokens, size_t begin = 0,
                size_t end = std::string::npos) {
  json spans = json::array();
  size_t previous = tokens.size();  // the last token in a span
  for (size_t t = 0; t < tokens.size(); ++t) {
    const auto& tok = tokens[t];
    const size_t first = char_start(text, std::max<size_t>(tok.begin, begin));
    const size_t last = char_end(text, std::min<size_t>(tok.end, end));
    if (tok.label_id == 0 || tok.label == "O" || last <= first) continue;
    char prefix = 0;
    const std::string type(strip_bio(tok.label, &prefix));
    if (prefix == 'I' && previous + 1 == t && spans.back()["label"] == type) {
      json& span = spans.back();
      const size_t start = span["start"].get<size_t>() + begin;
      span["end"] = last - begin;
      span["text"] = std::string(text.substr(start, last - start));
      span["confidence"] = std::max(span["confidence"].get<float>(), tok.probability);
    } else {
      spans.push_back({{"text", std::string(text.substr(first, last - first))},
                       {"start", first - begin},
                       {"end", last - begin},
                       {"confidence", tok.probability},
                       {"label", type}});
    }
    previous = t;
  }
  return spans;
}

// The longest prefix of `head` (on a character boundary) such that
// head' + tail fits the budget; input_limit when even the tail alone does not,
// or when it does not fit whole under overflow reject.
std::string fit_first_part(const Instance& inst, std::string_view head, const std::string& tail, const char* what) {
  const auto tokens = [&](std::string_view h) { return inst.model->count_tokens(std::string(h) + tail); };
  if (tokens(head) <= inst.max_input_tokens) return std::string(head) + tail;
  if (inst.overflow == "reject" || tokens({}) > inst.max_input_tokens)
    throw InstanceError("input_limit", std::string(what) + " exceeds the input budget of " +
                                           std::to_string(inst.max_input_tokens) + " tokens");
  size_t lo = 0, hi = head.size();  // fits at lo, not at hi
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    while (mid > lo && (static_cast<unsigned char>(head[mid]) & 0xC0) == 0x80) --mid;
    if (mid == lo) break;
    (tokens(head.substr(0, mid)) <= inst.max_input_tokens ? lo : hi) = mid;
  }
  return std::string(head.substr(0, lo)) + tail;
}

}  // namespace

extern "C" {

char* candle_instance_sequence(uint64_t handle, const char* text) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    inst->require_task("sequence");
    return distribution_json(*inst, inst->model->classify(text_arg(text)));
  });
}

char* candle_instance_score(uint64_t handle, const char* text) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    inst->require_task("label_scores");
    const semroute::Prediction p = inst->model->classify(text_arg(text));
    check_scores(p.probabilities, inst->labels.size(), false);
    return json{{"scores", p.probabilities}, {"labels", inst->labels}, {"input", input_json(p.input)}};
  });
}

char* candle_instance_classify_windows(uint64_t handle, const char* text, size_t size, size_t overlap) {
  return call_response([&] { return classify_windows(handle, text, size, overlap, "sequence", "probabilities"); });
}

char* candle_instance_score_windows(uint64_t handle, const char* text, size_t size, size_t overlap) {
  return call_response([&] { return classify_windows(handle, text, size, overlap, "label_scores", "scores"); });
}

char* candle_instance_tokens(uint64_t handle, const char* text) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    inst->require_task("token");
    const std::string_view t = text_arg(text);
    const semroute::TokenPredictions p = inst->model->classify_tokens(t);
    return json{{"spans", spans_json(t, p.tokens)}, {"input", input_json(p.input)}, {"offset_unit", "utf8_bytes"}};
  });
}

char* candle_instance_token_windows(uint64_t handle, const char* text, size_t size, size_t overlap) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    inst->require_task("token");
    if (!inst->modern) throw InstanceError("capability", "token windows need a ModernBERT-family token model");
    const std::string_view t = text_arg(text);
    const semroute_window_options o = window_options(*inst, size, overlap);
    const semroute::DocumentTokenPredictions d =
        inst->model->classify_token_windows(t, o.size, o.overlap, o.max_document_tokens);
    json windows = json::array();
    for (const auto& w : d.windows) windows.push_back({w.first, w.second});
    return json{{"spans", spans_json(t, d.result.tokens)},
                {"input", window_input(*inst, d.content_tokens)},
                {"offset_unit", "utf8_bytes"},
                {"content_tokens", d.content_tokens},
                {"windows", windows}};
  });
}

char* candle_instance_nli(uint64_t handle, const char* premise, const char* hypothesis) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    inst->require_task("nli");
    const std::string input =
        fit_first_part(*inst, text_arg(premise), " [SEP] " + std::string(text_arg(hypothesis)), "hypothesis");
    semroute::Prediction p = inst->model->classify(input);
    return distribution_json(*inst, p);
  });
}

char* candle_instance_hallucination(uint64_t handle, const char* context, const char* question, const char* answer,
                                    float threshold) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    inst->require_task("hallucination");
    const std::string_view q = text_arg(question), a = text_arg(answer);
    const std::string tail = (q.empty() ? std::string() : " Question: " + std::string(q)) + " [SEP] " + std::string(a);
    const std::string input = fit_first_part(*inst, text_arg(context), tail, "question and answer");
    if (!(threshold > 0 && threshold <= 1)) threshold = 0.5f;
    const size_t answer_begin = input.size() - a.size();
    const semroute::TokenPredictions p = inst->model->classify_tokens(input);
    std::vector<semroute::LabeledToken> flagged;
    for (auto tok : p.tokens) {
      if (tok.label_id != 1 || tok.probability < threshold) tok.label_id = 0;
      tok.label = "I-" + inst->labels[1];  // consecutive flagged tokens merge
      flagged.push_back(std::move(tok));
    }
    json spans = spans_json(input, flagged, answer_begin, input.size());
    float confidence = spans.empty() ? 1.0f : 0.0f;
    for (auto& s : spans) {
      s["label"] = "HALLUCINATED";
      confidence = std::max(confidence, s["confidence"].get<float>());
    }
    return json{{"has_hallucination", !spans.empty()},
                {"confidence", confidence},
                {"spans", spans},
                {"input", input_json(p.input)},
                {"offset_unit", "utf8_bytes"}};
  });
}

char* candle_instance_embedding(uint64_t handle, const char* text, size_t dimension, size_t layer) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    inst->require_task("embedding");
    const std::string_view t = text_arg(text);
    if (layer > 0 && !inst->modern && inst->model_type != "mmbert_embedding")
      throw InstanceError("capability", "layer early exit is not supported by " + inst->model_type);
    if (dimension > inst->model->embedding_dim())
      throw InstanceError("capability", "dimension " + std::to_string(dimension) + " is larger than the output");
    semroute_embed_options options = semroute_embed_default_options();
    options.dimension = static_cast<uint32_t>(dimension);
    options.layer = static_cast<uint32_t>(layer);
    const semroute::Embedding e = inst->model->embed_with_input({t}, options).at(0);
    for (float v : e.values)
      if (!std::isfinite(v)) throw InstanceError("result_invalid", "the embedding is not finite");
    return json{{"values", e.values}, {"input", input_json(e.input)}};
  });
}

char* candle_instance_text_windows(unsigned long long handle, const char* text, size_t max_tokens) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    const std::string_view t = text_arg(text);
    const size_t limit = max_tokens == 0 ? inst->max_input_tokens : std::min(max_tokens, inst->max_input_tokens);
    if (limit <= inst->special_tokens)
      throw InstanceError("configuration", "a window of " + std::to_string(limit) + " tokens holds no text beside " +
                                               std::to_string(inst->special_tokens) + " special tokens");
    const size_t content = limit - inst->special_tokens;
    const semroute::Tokens whole = inst->model->tokenize(t, false, true);  // to its end, no budget
    // Consecutive runs of `content` tokens, covering the text from its first
    // byte to its last (each window starts where its first token does).
    json out = json::array();
    const size_t n = whole.ids.size();
    for (size_t first = 0; first == 0 || first < n; first += content) {
      const size_t next = first + content;
      const size_t begin = first == 0 ? 0 : char_start(t, whole.offsets[first].first);
      const size_t end = next >= n ? t.size() : char_start(t, whole.offsets[next].first);
      out.push_back({begin, end});
    }
    return out;
  });
}

char* candle_instance_image(uint64_t handle, const uint8_t*, size_t, size_t) {
  return call_response([&]() -> json {
    find_instance(handle)->require_task("embedding");
    throw InstanceError("capability", "image embeddings need a multimodal model, which semroute does not run");
  });
}

char* candle_instance_audio(uint64_t handle, const float*, size_t, size_t, size_t, size_t) {
  return call_response([&]() -> json {
    find_instance(handle)->require_task("embedding");
    throw InstanceError("capability", "audio embeddings need a multimodal model, which semroute does not run");
  });
}

char* candle_instance_guard(uint64_t handle, const char*, const char*) {
  return call_response([&]() -> json {
    find_instance(handle)->require_task("guard");
    throw InstanceError("capability", "Qwen3Guard generation is not implemented by semroute");
  });
}

char* candle_instance_generative(uint64_t handle, const char*, const char*, const char*, bool) {
  return call_response([&]() -> json {
    find_instance(handle)->require_task("generative");
    throw InstanceError("capability", "generative classification is not implemented by semroute");
  });
}

char* candle_instance_embedding_descriptor(uint64_t handle, size_t layer, size_t dimension) {
  return call_response([&] { return embedding_descriptor(*find_instance(handle), layer, dimension); });
}

char* candle_instance_load_pair_scorer(const char* options, const char* selection) {
  return load_response([&] { return load_instance(Options::parse(options), "pair_scores", selection); });
}

char* candle_instance_score_pairs(uint64_t handle, const char* pairs) {
  return call_response([&] {
    const auto inst = find_instance(handle);
    inst->require_task("pair_scores");
    const json list = json::parse(text_arg(pairs), nullptr, false);
    if (!list.is_array() || list.empty()) throw InstanceError("configuration", "pairs must be a non-empty JSON array");
    std::vector<std::string> queries, documents;
    for (const auto& pair : list) {
      if (!pair.is_object() || pair.size() != 2 || !pair.contains("query") || !pair.contains("document") ||
          !pair["query"].is_string() || !pair["document"].is_string())
        throw InstanceError("configuration", "each pair is {\"query\": string, \"document\": string}");
      queries.push_back(pair["query"]);
      documents.push_back(pair["document"]);
      if (is_blank(queries.back()) || is_blank(documents.back()))
        throw InstanceError("configuration", "a pair's query and document must not be blank");
    }
    const auto scored = inst->model->score_pairs({queries.begin(), queries.end()}, {documents.begin(), documents.end()});
    json scores = json::array(), inputs = json::array();
    for (const auto& s : scored) {
      if (!std::isfinite(s.score)) throw InstanceError("result_invalid", "a pair score is not finite");
      scores.push_back(s.score);
      inputs.push_back(input_json(s.input));
    }
    return json{{"scores", scores}, {"inputs", inputs}};
  });
}

}  // extern "C"

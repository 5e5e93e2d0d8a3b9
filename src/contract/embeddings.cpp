// POST /v1/embeddings: OpenAI's embeddings API with the contract's
// dimensions, layer exits, input types, overflow and per-item errors.
#include <cstring>

#include "contract/contract.h"

namespace semroute {
namespace {

// Little-endian float32 values in base64 (the OpenAI encoding_format).
std::string base64_floats(const std::vector<float>& values) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());  // x86-64 is little-endian
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const auto b = [&](size_t k) { return k < bytes.size() ? static_cast<unsigned char>(bytes[k]) : 0u; };
    const unsigned v = (b(i) << 16) | (b(i + 1) << 8) | b(i + 2);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[v & 63] : '=';
  }
  return out;
}

// The texts of "input": a string, a list of strings, or a list of content
// parts; nullopt marks a malformed item. A part of a modality this model
// lacks (images, audio) fails the request.
std::vector<std::optional<std::string_view>> texts_of(const Json& input) {
  std::vector<std::optional<std::string_view>> texts;
  if (input.is_string()) {
    texts.emplace_back(input.get_ref<const std::string&>());
    return texts;
  }
  for (const auto& item : input) {
    if (item.is_string()) {
      texts.emplace_back(item.get_ref<const std::string&>());
      continue;
    }
    const auto type = item.is_object() ? item.find("type") : item.end();
    if (item.is_object() && type != item.end() && type->is_string() && *type != "text")
      throw invalid_request("\"input\": this model embeds text only, not " + type->get<std::string>());
    const auto text = item.is_object() ? item.find("text") : item.end();
    const bool well_formed = item.is_object() && item.size() == 2 && type != item.end() && text != item.end() &&
                             text->is_string();
    texts.push_back(well_formed ? std::optional<std::string_view>(text->get_ref<const std::string&>()) : std::nullopt);
  }
  return texts;
}

}  // namespace

Json embeddings_surface(const Json& body, const SurfaceCall& call) {
  allow_fields(body, {"model", "input", "dimensions", "encoding_format", "layer", "input_type", "user", "options"},
               "the request");
  const Json options = body.value("options", Json::object());
  allow_fields(options, {"deadline_ms", "profile", "return_meta", "overflow", "max_tokens"}, "options");
  const auto input = body.find("input");
  if (input == body.end()) throw invalid_request("\"input\": required");
  if (!input->is_string() && !(input->is_array() && !input->empty()))
    throw invalid_request("\"input\": a string, or a non-empty list of strings or content parts");
  if (input->is_array() && input->size() > kMaxContractInputs)
    throw invalid_request("\"input\": at most " + std::to_string(kMaxContractInputs) + " inputs per request");
  string_field(body, "user", "the request");
  const std::string format = string_field(body, "encoding_format", "the request").value_or("float");
  if (format != "float" && format != "base64") throw invalid_request("\"encoding_format\": float or base64");
  EmbedRequest request;
  request.dimension = integer_field(body, "dimensions", 1, "the request").value_or(0);
  request.layer = integer_field(body, "layer", 1, "the request").value_or(0);
  request.input_type = string_field(body, "input_type", "the request").value_or("");
  if (!request.input_type.empty() && request.input_type != "query" && request.input_type != "document")
    throw invalid_request("\"input_type\": query or document");
  if (const auto overflow = string_field(options, "overflow", "options")) {
    if (*overflow != "reject" && *overflow != "truncate") throw invalid_request("options.overflow: reject or truncate");
    request.overflow = *parse_overflow_policy(*overflow);
  }
  request.max_tokens = static_cast<size_t>(integer_field(options, "max_tokens", 1, "options").value_or(0));
  const ServedModel& model = select_model(body, call.models);
  const CommonOptions common = common_options(options, model);
  if (!model.embedding) throw ContractError(422, "unsupported_surface", "model \"" + model.name + "\" does not embed");

  const auto texts = texts_of(*input);
  std::vector<std::string_view> good;
  std::vector<size_t> positions;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i]) {
      good.push_back(*texts[i]);
      positions.push_back(i);
    }
  }
  const ModelSlot slot(model, call.limits);
  const std::vector<EmbedAnswer> answers = model.embedding->embed(good, request, control_for(call, common));

  std::vector<Json> data(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) data[i] = {{"object", "embedding"}, {"index", i}, {"error", "invalid_input"}};
  size_t tokens = 0;
  for (size_t k = 0; k < answers.size(); ++k) {
    const EmbedAnswer& a = answers[k];
    Json& d = data[positions[k]];
    d["input"] = input_usage(a.input);
    if (a.error != ItemError::kNone) {
      d["error"] = item_error_name(a.error);
      continue;
    }
    d.erase("error");
    d["embedding"] = format == "base64" ? Json(base64_floats(a.embedding)) : Json(a.embedding);
    tokens += a.input.processed_tokens;
  }
  Json out = {{"object", "list"},
                        {"data", data},
                        {"model", model.name},
                        {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  if (common.return_meta) {
    const EmbeddingInfo& info = model.embedding->info();
    out["meta"] = response_meta(model, *call.times);
    out["meta"]["representation"] = {{"model_sha256", model.identity.model_sha256},
                                     {"layer", request.layer > 0 ? request.layer : info.layers.back()},
                                     {"dimension", request.dimension > 0 ? request.dimension : info.dimensions.front()},
                                     {"normalized", info.normalized},
                                     {"modality", "text"}};
  }
  return out;
}

}  // namespace semroute

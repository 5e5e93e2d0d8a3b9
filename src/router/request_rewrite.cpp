#include "router/request_rewrite.h"

#include <algorithm>

#include "semroute/error.h"

namespace semroute {
namespace {

[[noreturn]] void bad_request(const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "chat request: " + why);
}

// A message's text: its content string, or its "text" parts joined by newlines.
std::string message_text(const RequestJson& message, size_t index) {
  const auto content = message.find("content");
  if (content == message.end() || content->is_null()) return {};
  if (content->is_string()) return content->get<std::string>();
  if (!content->is_array())
    bad_request("messages[" + std::to_string(index) + "].content is neither a string nor a list of parts");
  std::string text;
  for (const auto& part : *content) {
    if (!part.is_object()) continue;
    const auto type = part.find("type"), value = part.find("text");
    if (type != part.end() && *type == "text" && value != part.end() && value->is_string())
      text += (text.empty() ? "" : "\n") + value->get<std::string>();
  }
  return text;
}

bool has_role(const RequestJson& message, const char* role) {
  if (!message.is_object()) return false;
  const auto it = message.find("role");
  return it != message.end() && it->is_string() && *it == role;
}

void apply_system_prompt(const Action& action, RequestJson& request) {
  if (action.system_prompt.empty()) return;
  if (!request.contains("messages")) return;  // a completions request: nothing to add it to
  RequestJson& messages = request["messages"];
  if (!messages.is_array()) bad_request("\"messages\" is not a list");
  const auto system = std::find_if(messages.begin(), messages.end(),
                                   [](const RequestJson& m) { return has_role(m, "system"); });
  if (system == messages.end()) {
    messages.insert(messages.begin(), RequestJson{{"role", "system"}, {"content", action.system_prompt}});
    return;
  }
  RequestJson& content = (*system)["content"];
  switch (action.system_prompt_mode) {
    case SystemPromptMode::kInsert:
      return;
    case SystemPromptMode::kReplace:
      content = action.system_prompt;
      return;
    case SystemPromptMode::kPrepend:
      if (content.is_array()) {
        content.insert(content.begin(), RequestJson{{"type", "text"}, {"text", action.system_prompt}});
      } else {
        const std::string existing = content.is_string() ? content.get<std::string>() : "";
        content = existing.empty() ? action.system_prompt : action.system_prompt + "\n\n" + existing;
      }
      return;
  }
}

void apply_max_tokens(int64_t cap, RequestJson& request) {
  const char* key = request.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  const auto it = request.find(key);
  if (it == request.end() || !it->is_number() || it->get<double>() > static_cast<double>(cap)) request[key] = cap;
}

}  // namespace

const char* system_prompt_mode_name(SystemPromptMode mode) {
  switch (mode) {
    case SystemPromptMode::kInsert: return "insert";
    case SystemPromptMode::kReplace: return "replace";
    case SystemPromptMode::kPrepend: return "prepend";
  }
  return "?";
}

std::string request_text(const RequestJson& request) {
  if (!request.is_object()) bad_request("not a JSON object");
  const auto messages = request.find("messages");
  if (messages != request.end()) {
    if (!messages->is_array()) bad_request("\"messages\" is not a list");
    for (size_t i = messages->size(); i-- > 0;)
      if (has_role((*messages)[i], "user")) return message_text((*messages)[i], i);
    bad_request("no user message");
  }
  const auto prompt = request.find("prompt");
  if (prompt != request.end() && prompt->is_string()) return prompt->get<std::string>();
  bad_request("neither \"messages\" nor a \"prompt\" string");
}

std::string request_ground_truth(const RequestJson& request) {
  std::string truth;
  const auto messages = request.find("messages");
  if (messages == request.end() || !messages->is_array()) return truth;
  for (size_t i = 0; i < messages->size(); ++i) {
    const RequestJson& m = (*messages)[i];
    if (!has_role(m, "tool") && !has_role(m, "function")) continue;
    const std::string text = message_text(m, i);
    if (text.empty()) continue;
    truth += (truth.empty() ? "" : "\n\n") + text;
  }
  return truth;
}

void apply_action(const Action& action, const std::vector<std::string>& auto_models, RequestJson& request) {
  if (!request.is_object()) bad_request("not a JSON object");
  if (!action.model.empty()) {
    const auto model = request.find("model");
    const bool automatic =
        model == request.end() || model->is_null() ||
        (model->is_string() && std::find(auto_models.begin(), auto_models.end(), model->get<std::string>()) !=
                                   auto_models.end());
    if (automatic) request["model"] = action.model;
  }
  apply_system_prompt(action, request);
  if (!action.reasoning_effort.empty()) request["reasoning_effort"] = action.reasoning_effort;
  if (action.max_tokens) apply_max_tokens(*action.max_tokens, request);
}

}  // namespace semroute

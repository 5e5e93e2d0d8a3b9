// What a routing decision does to an OpenAI chat-completions request, and the
// text a router classifies in it. Every field the action does not own is
// left as it came (order included: nlohmann::ordered_json).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace semroute {

using RequestJson = nlohmann::ordered_json;

enum class SystemPromptMode {
  kInsert,   // add a system message only if the request has none (the caller's wins)
  kReplace,  // the first system message's content becomes the prompt (added if none)
  kPrepend,  // the prompt, a blank line, then the first system message's content (added if none)
};

const char* system_prompt_mode_name(SystemPromptMode mode);

struct Action {
  std::string model;                   // empty: leave "model" as it is
  std::string system_prompt;           // empty: none
  SystemPromptMode system_prompt_mode = SystemPromptMode::kInsert;
  std::string reasoning_effort;        // "low" | "medium" | "high"; empty: leave it
  std::optional<int64_t> max_tokens;   // a cap: set when absent or larger
  std::map<std::string, std::string> headers;  // for the caller to add upstream
  bool block = false;                  // refuse the request
  std::string block_reason;
  bool cache = false;                  // serve from / store in the semantic cache
  bool check_answer = false;           // the answer should be checked for hallucinations
};

// The text to classify: the last user message (its content string, or its
// text parts joined by newlines), else a completions-style "prompt" string.
// Throws Error (kInvalidArgument) when the request has neither or is
// malformed where it matters (messages not a list, content neither a string
// nor a list of parts).
std::string request_text(const RequestJson& request);

// What an answer to `request` can be checked against: the contents of its
// tool (and legacy function) messages, joined by blank lines; "" if none.
std::string request_ground_truth(const RequestJson& request);

// Applies `action` to `request`: "model" (only when the request's model is one
// of `auto_models`, or absent), the system prompt, "reasoning_effort" and the
// "max_tokens" cap ("max_completion_tokens" when the request uses that).
void apply_action(const Action& action, const std::vector<std::string>& auto_models, RequestJson& request);

}  // namespace semroute

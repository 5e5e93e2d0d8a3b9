// What the model runtime answers per item (a text, a pair, a document): the
// vLLM Semantic Router's runtime contract (docs/runtime.md) gives every item
// its own result or its own error, so one bad or long input never fails the
// items beside it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace semroute {

// Why one item has no result (the contract's ItemError).
enum class ItemError {
  kNone,
  kInvalidInput,        // malformed (a pair for a head that reads texts, a blank document, …)
  kMaxLengthExceeded,   // more tokens than the budget, with overflow reject
  kScanBudgetExceeded,  // a windowed input longer than its scan budget: none of it read
  kInvalidModelOutput,  // the model computed a non-finite value
  kDeadlineExceeded,    // the request's deadline passed before its forward started
  kUnavailable,
};
const char* item_error_name(ItemError error);

// What an input longer than its budget gets.
enum class OverflowPolicy { kReject, kTruncate, kWindow };
const char* overflow_policy_name(OverflowPolicy policy);
// "reject" | "truncate" | "window"; nullopt for anything else.
std::optional<OverflowPolicy> parse_overflow_policy(std::string_view name);

// Tokenizer facts of one input, special tokens included.
struct InputFacts {
  size_t tokens = 0;            // of the whole input, or a lower bound (tokens_lower_bound)
  size_t processed_tokens = 0;  // the model read (windows: each content token once)
  bool truncated = false;
  bool tokens_lower_bound = false;  // read only as far as its budget needed
  size_t windows = 0;               // 0: not windowed
};

// Code-point offsets of byte offsets into one UTF-8 text, for offsets asked
// in increasing order (spans, tokens): each call counts from the last.
class CodePoints {
 public:
  explicit CodePoints(std::string_view text) : text_(text) {}
  size_t at(size_t byte);

 private:
  std::string_view text_;
  size_t byte_ = 0, count_ = 0;
};

}  // namespace semroute

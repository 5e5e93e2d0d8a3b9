#include "runtime/item_results.h"

#include "tokenizers/unicode.h"

namespace semroute {

const char* item_error_name(ItemError error) {
  switch (error) {
    case ItemError::kNone: return "";
    case ItemError::kInvalidInput: return "invalid_input";
    case ItemError::kMaxLengthExceeded: return "max_length_exceeded";
    case ItemError::kScanBudgetExceeded: return "scan_budget_exceeded";
    case ItemError::kInvalidModelOutput: return "invalid_model_output";
    case ItemError::kDeadlineExceeded: return "deadline_exceeded";
    case ItemError::kUnavailable: return "unavailable";
  }
  return "unavailable";
}

const char* overflow_policy_name(OverflowPolicy policy) {
  switch (policy) {
    case OverflowPolicy::kReject: return "reject";
    case OverflowPolicy::kTruncate: return "truncate";
    case OverflowPolicy::kWindow: return "window";
  }
  return "reject";
}

std::optional<OverflowPolicy> parse_overflow_policy(std::string_view name) {
  if (name == "reject") return OverflowPolicy::kReject;
  if (name == "truncate") return OverflowPolicy::kTruncate;
  if (name == "window") return OverflowPolicy::kWindow;
  return std::nullopt;
}

size_t CodePoints::at(size_t byte) {
  if (byte > text_.size()) byte = text_.size();
  if (byte < byte_) byte_ = count_ = 0;  // asked backwards: count again from the start
  for (; byte_ < byte; ++byte_)
    if (!unicode::is_continuation_byte(text_[byte_])) ++count_;
  return count_;
}

}  // namespace semroute

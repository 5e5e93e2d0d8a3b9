#include "hallucination/sse_reader.h"

#include <nlohmann/json.hpp>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {

void SseReader::feed(std::string_view chunk, std::string& text) {
  for (const char c : chunk) {
    if (c == '\n' && after_cr_) {
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      end_line(text);
      continue;
    }
    if (line_.size() + data_.size() >= max_event_bytes_)
      throw InvalidInput("SSE: a line or event is longer than " + std::to_string(max_event_bytes_) + " bytes",
                         ErrorCode::kTooLong);
    line_ += c;
  }
}

void SseReader::finish(std::string& text) {
  if (!line_.empty()) end_line(text);
  if (has_data_) dispatch(text);
}

void SseReader::end_line(std::string& text) {
  const std::string_view line = line_;
  if (line.empty()) {
    if (has_data_) dispatch(text);
  } else if (line.front() != ':') {
    const size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data_) data_ += '\n';
      data_.append(value);
      has_data_ = true;
    }
  }
  line_.clear();
}

void SseReader::dispatch(std::string& text) {
  ++events_;
  const std::string data = std::move(data_);
  data_.clear();
  has_data_ = false;
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  const std::string where = "SSE event " + std::to_string(events_);
  nlohmann::json event;
  try {
    check_json_nesting(data, where);
    event = nlohmann::json::parse(data);
  } catch (const std::exception& e) {
    throw InvalidInput(where + ": the data is not JSON (" + std::string(e.what()).substr(0, 200) + ")");
  }
  if (!event.is_object()) throw InvalidInput(where + ": the data is not a JSON object");
  if (event.contains("error")) throw InvalidInput(where + ": the stream reports an error: " + event["error"].dump().substr(0, 300));
  const auto choices = event.find("choices");
  if (choices == event.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) return;
  const auto& choice = (*choices)[0];
  const nlohmann::json* content = nullptr;
  if (const auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
    if (const auto c = delta->find("content"); c != delta->end()) content = &*c;
  } else if (const auto t = choice.find("text"); t != choice.end()) {
    content = &*t;
  }
  if (!content || content->is_null()) return;
  if (!content->is_string()) throw InvalidInput(where + ": the content is not a string");
  text += content->get_ref<const std::string&>();
}

}  // namespace semroute

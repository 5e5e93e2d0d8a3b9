// Server-sent events of an OpenAI chat-completions stream, read incrementally:
// chunks cut anywhere (inside a line, between \r and \n) give the same text.
// Lines end with \n, \r\n or \r; a blank line ends an event; `:` lines are
// comments (keep-alives); `data:` lines of one event are joined with \n;
// `event:`, `id:` and `retry:` are ignored. An event's data is `[DONE]` (the
// end) or JSON whose choices[0].delta.content (chat) or choices[0].text
// (completions) is the next piece of the answer; events without content
// (role, usage) add nothing. Data that is not JSON, an event with an "error"
// object, a line or event longer than the limit are InvalidInput errors.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace semroute {

class SseReader {
 public:
  explicit SseReader(size_t max_event_bytes = size_t{1} << 20) : max_event_bytes_(max_event_bytes) {}

  // Appends the answer text carried by the events completed in `chunk` to `text`.
  void feed(std::string_view chunk, std::string& text);
  // The end of the stream: an event left without its blank line is read.
  void finish(std::string& text);
  bool done() const { return done_; }  // [DONE] was read
  size_t buffered_bytes() const { return line_.size() + data_.size(); }

 private:
  void end_line(std::string& text);
  void dispatch(std::string& text);

  size_t max_event_bytes_;
  std::string line_, data_;
  bool has_data_ = false;
  bool after_cr_ = false;  // a \n right after a \r ends nothing
  bool done_ = false;
  size_t events_ = 0;
};

}  // namespace semroute

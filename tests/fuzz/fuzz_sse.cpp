// Fuzz target: any byte string as an OpenAI SSE stream, read whole and in
// chunks cut where the input says. Malformed events must be refused with an
// error; whatever is read must be the same in both readings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hallucination/sse_reader.h"
#include "semroute/error.h"

namespace {

// The text read, or "\x01error" when the reader refused the stream.
std::string read(std::string_view stream, size_t chunk) {
  semroute::SseReader reader(4096);
  std::string text;
  try {
    for (size_t i = 0; i < stream.size(); i += chunk) reader.feed(stream.substr(i, chunk), text);
    reader.finish(text);
  } catch (const semroute::Error&) {
    return "\x01error";
  }
  return text + (reader.done() ? "\x01done" : "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (read(stream, stream.size() + 1) != read(stream, 1 + data[0] % 17)) std::abort();
  return 0;
}

// Fuzz target: the router drop-in's owned-instance interface with any text,
// options JSON, window sizes and head paths. Every call must answer one JSON
// envelope, {"value": …} or {"error": "<code>: …"} with one of the seven
// codes, and never crash or leak. The input is split at its first NUL: the
// first part is the text / options, two bytes of the second the window.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "candle_instance.h"
#include "fuzz_util.h"

namespace {

// Parses an answer and checks the envelope; frees it.
nlohmann::json check(char* answer) {
  if (answer == nullptr) std::abort();
  const nlohmann::json j = nlohmann::json::parse(answer, nullptr, false);
  candle_instance_free_string(answer);
  if (!j.is_object() || j.size() != 1) std::abort();
  if (j.contains("error")) {
    const std::string e = j["error"].get<std::string>();
    static const char* const codes[] = {"configuration: ", "capability: ", "input_limit: ", "result_invalid: ",
                                        "execution: ", "closed: ", "load: "};
    bool known = false;
    for (const char* c : codes) known = known || e.rfind(c, 0) == 0;
    if (!known) std::abort();
  } else if (!j.contains("value")) {
    std::abort();
  }
  return j;
}

uint64_t load(char* (*loader)(const char*), const char* options) {
  const nlohmann::json j = check(loader(options));
  if (!j.contains("value")) std::abort();
  return j["value"].get<uint64_t>();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  semroute::fuzz::signal_handlers_on_own_stack();
  static const uint64_t sequence = load(
      candle_instance_load_sequence, R"({"model_path": ")" SEMROUTE_REPO_DIR R"(/models/domain", "max_input_tokens": 64})");
  static const uint64_t token =
      load(candle_instance_load_token, R"({"model_path": ")" SEMROUTE_REPO_DIR R"(/models/pii", "max_input_tokens": 64})");
  const char* bytes = size > 0 ? reinterpret_cast<const char*>(data) : "";
  const size_t split = strnlen(bytes, size);
  const std::string text(bytes, split);
  const size_t window = split + 1 < size ? static_cast<uint8_t>(bytes[split + 1]) % 70 : 8;
  const size_t overlap = split + 2 < size ? static_cast<uint8_t>(bytes[split + 2]) % 70 : 2;

  check(candle_instance_sequence(sequence, text.c_str()));
  check(candle_instance_classify_windows(sequence, text.c_str(), window, overlap));
  check(candle_instance_tokens(token, text.c_str()));
  check(candle_instance_token_windows(token, text.c_str(), window, overlap));
  check(candle_instance_text_windows(sequence, text.c_str(), window));
  check(candle_instance_nli(sequence, text.c_str(), text.c_str()));
  check(candle_instance_score_pairs(sequence, text.c_str()));
  // The text as options and as a head path: refused cleanly, or loaded and closed.
  for (char* (*loader)(const char*) : {candle_instance_load_sequence, candle_instance_load_backbone}) {
    const nlohmann::json j = check(loader(text.c_str()));
    if (j.contains("value")) check(candle_instance_close(j["value"].get<uint64_t>()));
  }
  const nlohmann::json bound = check(candle_instance_bind_head(sequence, text.c_str(), "sequence"));
  if (bound.contains("value")) check(candle_instance_close(bound["value"].get<uint64_t>()));
  check(candle_instance_info(static_cast<uint64_t>(window) << 40));  // an unknown handle: closed
  return 0;
}

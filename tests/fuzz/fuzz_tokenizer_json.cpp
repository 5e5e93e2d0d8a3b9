// Fuzz target: a tokenizer.json file (any bytes) must load or be refused with
// a semroute::Error; a tokenizer that loads must encode, truncate and decode
// without crashing, and every offset must lie inside its text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "semroute/error.h"
#include "tokenizers/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string long_text = [] {
    std::string t;
    while (t.size() < 70000) t += "Hello, World! héllo wörld 你好 123 ##ab [CLS] <s> ";
    return t;
  }();
  try {
    const auto tok = semroute::load_tokenizer(semroute::fuzz::write_input(data, size, ".json"));
    for (const std::string& text : {std::string("Hello world, a test."), std::string(""), long_text}) {
      semroute::EncodeOptions options;
      options.max_length = 64;
      const semroute::Encoding e = tok->encode(text, options);
      for (const auto& o : e.offsets)
        if (o.begin > o.end || o.end > text.size()) std::abort();
      tok->decode(e.ids);
    }
  } catch (const semroute::Error&) {
  }
  return 0;
}

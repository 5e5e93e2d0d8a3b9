// `semroute tokenize`: token ids, tokens and byte offsets of a text.
#include <cstdio>

#include "cli.h"
#include "semroute/error.h"
#include "tokenizers/tokenizer.h"

namespace semroute::cli {

namespace {

nlohmann::json encoding_json(const Encoding& e) {
  nlohmann::json offsets = nlohmann::json::array();
  for (const auto& o : e.offsets) offsets.push_back({o.begin, o.end});
  return {{"ids", e.ids},
          {"tokens", e.tokens},
          {"offsets", offsets},
          {"type_ids", e.type_ids},
          {"special_tokens_mask", e.special_tokens_mask}};
}

}  // namespace

int run_tokenize(const Args& args) {
  const bool from_input = reads_input(args, 1);
  if (args.positional.size() != 2 && !(from_input && args.positional.size() <= 2))
    throw InvalidInput(
        "usage: semroute tokenize MODEL_DIR TEXT | - | --input FILE [--pair TEXT] [--no-special] [--max-length N] "
        "[--json]");
  const auto tokenizer = load_tokenizer(args.positional[0]);
  EncodeOptions options;
  options.add_special_tokens = !args.no_special;
  options.max_length = args.max_length;
  const auto encode = [&](std::string_view text) {
    return args.pair.empty() ? tokenizer->encode(text, options) : tokenizer->encode_pair(text, args.pair, options);
  };
  if (from_input) {  // JSONL out, one encoding per text
    return stream_texts(args, [&](const std::vector<std::string_view>& texts) {
      std::vector<nlohmann::json> out;
      for (const std::string_view text : texts) out.push_back(encoding_json(encode(text)));
      return out;
    });
  }
  const std::string& text = args.positional[1];
  const Encoding e = encode(text);
  // A byte-level token may hold part of a character: shown as U+FFFD.
  const auto quoted = [](const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  if (args.json) {
    std::printf("%s\n", quoted(encoding_json(e)).c_str());
    return 0;
  }
  for (size_t i = 0; i < e.size(); ++i) {
    const auto& o = e.offsets[i];
    const int8_t seq = e.sequence_ids[i];
    const std::string& source = seq == 1 ? args.pair : text;
    const std::string surface = seq < 0 || o.end > source.size() ? "" : source.substr(o.begin, o.end - o.begin);
    std::printf("%8d  %-24s [%u, %u)  %s\n", e.ids[i], quoted(e.tokens[i]).c_str(), o.begin, o.end,
                quoted(surface).c_str());
  }
  return 0;
}

}  // namespace semroute::cli

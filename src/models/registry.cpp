// The one place where backends are registered: one entry per architecture.
#include "models/bert.h"
#include "models/gemma3.h"
#include "models/model_factory.h"
#include "models/modernbert.h"
#include "models/qwen3.h"

namespace semroute {

const std::vector<Backend>& registered_backends() {
  static const std::vector<Backend> backends = {
      // name, model_type, weight prefixes, builder, heads, embedding convention
      {"bert", {"bert"}, {"", "bert.", "model."}, &BertEncoder::create, &BertEncoder::head_layout,
       {Pooling::kMean, ""}},
      {"modernbert", {"modernbert"}, {"", "model.", "encoder."}, &ModernBertEncoder::create,
       &ModernBertEncoder::head_layout, {Pooling::kMean, ""}},
      {"qwen3", {"qwen3"}, {"", "model."}, &Qwen3Encoder::create, &Qwen3Encoder::head_layout,
       {Pooling::kLastToken, "<|endoftext|>"}},
      {"gemma3", {"gemma3_text", "gemma3"}, {"", "model.", "model.language_model."}, &Gemma3Encoder::create,
       &Gemma3Encoder::head_layout, {Pooling::kMean, ""}},
  };
  return backends;
}

}  // namespace semroute

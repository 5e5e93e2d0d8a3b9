// The one place where backends are registered: one line per architecture.
#include "models/bert.h"
#include "models/gemma3.h"
#include "models/model_factory.h"
#include "models/modernbert.h"
#include "models/qwen3.h"

namespace semroute {

const std::vector<Backend>& registered_backends() {
  static const std::vector<Backend> backends = {
      // name    model_type   architectures   weight prefixes         builder
      {"bert", {"bert"}, "Bert", {"", "bert.", "model."}, &BertEncoder::create},
      {"modernbert", {"modernbert"}, "ModernBert", {"", "model."}, &ModernBertEncoder::create},
      {"qwen3", {"qwen3"}, "Qwen3", {"", "model."}, &Qwen3Encoder::create},
      {"gemma3", {"gemma3_text", "gemma3"}, "Gemma3", {"", "model.", "model.language_model."}, &Gemma3Encoder::create},
  };
  return backends;
}

}  // namespace semroute

// The one place where backends are registered: one line per architecture.
#include "models/bert.h"
#include "models/model_factory.h"
#include "models/modernbert.h"

namespace semroute {

const std::vector<Backend>& registered_backends() {
  static const std::vector<Backend> backends = {
      // name    model_type   architectures   weight prefixes         builder
      {"bert", {"bert"}, "Bert", {"", "bert.", "model."}, &BertEncoder::create},
      {"modernbert", {"modernbert"}, "ModernBert", {"", "model."}, &ModernBertEncoder::create},
  };
  return backends;
}

}  // namespace semroute

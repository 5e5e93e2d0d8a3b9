// The one place where backends are registered: one line per architecture.
#include "models/bert.h"
#include "models/model_factory.h"

namespace semroute {

const std::vector<Backend>& registered_backends() {
  static const std::vector<Backend> backends = {
      // name    model_type   architectures   weight prefixes         builder
      {"bert", {"bert"}, "Bert", {"", "bert.", "model."}, &BertEncoder::create},
  };
  return backends;
}

}  // namespace semroute

#include "models/task_conventions.h"

#include "semroute/error.h"

namespace semroute {

Pooling parse_pooling(const std::string& name) {
  if (name == "cls" || name == "pooling_mode_cls_token") return Pooling::kCls;
  if (name == "mean" || name == "pooling_mode_mean_tokens") return Pooling::kMean;
  if (name == "last" || name == "lasttoken" || name == "pooling_mode_lasttoken") return Pooling::kLastToken;
  throw InvalidInput("unknown pooling '" + name + "' (use cls, mean or last)");
}

}  // namespace semroute

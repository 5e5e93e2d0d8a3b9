// `semroute route`: one chat request through a router config.
#include <cstdio>

#include "cli.h"
#include "core/file_input.h"
#include "router/router.h"
#include "semroute/error.h"

namespace semroute::cli {
namespace {

constexpr size_t kMaxRequestFileBytes = size_t{80} << 20;

}  // namespace

int run_route(const Args& args) {
  const char* usage = "usage: semroute route CONFIG.yaml REQUEST.json|- [--meta KEY=VALUE]... [--json]";
  if (args.positional.size() != 2) throw InvalidInput(usage);
  const auto router = Router::load(args.positional[0]);
  const std::string& source = args.positional[1];
  const std::string request = read_input(source, kMaxRequestFileBytes);
  const RouteResult result = router->route_json(request, args.metadata);
  if (args.json) {
    std::printf("%s\n", result.to_json().dump(2).c_str());
  } else {
    std::printf("%s%s: %s\n", result.to_text().c_str(), result.blocked ? "response" : "request",
                (result.blocked ? result.response : result.request).dump().c_str());
  }
  return 0;
}

}  // namespace semroute::cli

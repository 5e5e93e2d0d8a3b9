// `semroute runtime`: one request of the vLLM Semantic Router's model runtime
// contract in process (docs/runtime.md), the same JSON `semroute serve`
// answers on the same path: for scripts, and to check a model package (its
// identity, golden answers, heads) without a server.
#include <algorithm>
#include <cstdio>

#include "cli.h"
#include "contract/contract.h"
#include "semroute/error.h"
#include "server/models_file.h"

namespace semroute::cli {
namespace {

constexpr const char* kRuntimeUsage =
    "usage: semroute runtime (MODEL_DIR | --models FILE.json) PATH [REQUEST.json | -] [--cache-dir DIR]\n"
    "One request of the model runtime contract in process (docs/runtime.md): POST PATH (/v1/classify,\n"
    "/v1/embeddings, /v1/rerank, /v1/bundle) with REQUEST's JSON, or GET PATH (/v1/models, /health) without one.\n"
    "MODEL_DIR is served under its directory's name; FILE.json is a router's models file. Prints the JSON\n"
    "answer; the HTTP status and Server-Timing go to stderr, and the exit status is 0 for 200, else 1.";

constexpr size_t kMaxRequestBytes = size_t{64} << 20;

}  // namespace

int run_runtime(const std::vector<std::string>& argv) {
  if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
    std::printf("%s\n", kRuntimeUsage);
    return 0;
  }
  const Options args = parse_options(argv, kRuntimeUsage, {"models", "cache-dir"});
  std::vector<std::string> rest = args.positional;
  ServeConfig config;
  if (args.has("models")) {
    config = serve_config_from_models_file(args.get("models"), args.get("cache-dir"));
  } else {
    if (rest.empty()) throw InvalidInput(kRuntimeUsage);
    ServedModelConfig model;
    model.path = rest.front();
    config.models.emplace(std::filesystem::path(rest.front()).lexically_normal().filename().string(), model);
    rest.erase(rest.begin());
  }
  if (rest.empty() || rest.size() > 2) throw InvalidInput(kRuntimeUsage);
  const std::string path = rest[0];
  const std::string body = rest.size() == 2 ? read_input(rest[1], kMaxRequestBytes) : "";
  ServedModels models;
  for (const auto& [name, c] : config.models) models.emplace(name, load_served_model(name, c));
  const ContractLimits limits{64, 1024, kMaxRequestBytes};
  const auto reply = contract_reply(rest.size() == 2 ? "POST" : "GET", path, body, models, limits, RequestControl());
  if (!reply) throw InvalidInput("no runtime contract path " + path + "\n" + kRuntimeUsage);
  std::printf("%s\n", reply->body.c_str());
  std::fprintf(stderr, "HTTP %d", reply->status);
  for (const auto& [header, value] : reply->headers) std::fprintf(stderr, "; %s: %s", header.c_str(), value.c_str());
  std::fprintf(stderr, "\n");
  return reply->status == 200 ? 0 : 1;
}

}  // namespace semroute::cli

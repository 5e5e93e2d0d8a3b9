// `semroute serve CONFIG.yaml`: the classification layer as a separate
// process (src/server/). SIGTERM / SIGINT: stop accepting, answer what was
// sent, cancel what still computes after --grace-seconds, exit 0. SIGHUP:
// reload the router configs (each that loads replaces its old version; each
// that does not keeps it).
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli.h"
#include "core/runtime.h"
#include "semroute/error.h"
#include "server/http_server.h"
#include "server/models_file.h"
#include "server/service.h"

namespace semroute::cli {
namespace {

constexpr const char* kServeUsage =
    "usage: semroute serve CONFIG.yaml [--listen HOST:PORT] [--unix-socket PATH] [--grace-seconds N]\n"
    "       semroute serve --models FILE.json [--uds PATH | --host H --port P] [--max-request-bytes N]\n"
    "                      [--max-bundle-tasks N] [--max-queue N] [--result-cache-entries N] [--cache-dir DIR]\n"
    "                      [--threads N] [--served-model-name NAME] [--offline] [--accept-licence]\n"
    "Serves the models, unified classifiers and routers CONFIG.yaml names over HTTP/1.1 (docs/serve.md);\n"
    "or, as the vLLM Semantic Router starts its model runtime, the models of its models file (docs/runtime.md:\n"
    "local directories, or Hub ids found in the local Hugging Face cache; nothing is downloaded).\n"
    "--listen / --unix-socket replace the config's; port 0 picks a free port. The first line printed\n"
    "says where it listens. SIGTERM: answer the requests already sent (at most --grace-seconds, 30; then what\n"
    "still computes is cancelled) and exit.";

// The runtime command line the router's managed start uses: its models
// file, its socket and its limits (runtime defaults: 127.0.0.1:8100, 8 MiB
// bodies, 64 bundle tasks, 256 queued requests).
ServeConfig runtime_config(const Options& args) {
  ServeConfig config = serve_config_from_models_file(args.get("models"), args.get("cache-dir"));
  config.unix_socket = args.get("uds");
  if (config.unix_socket.empty() || args.has("host") || args.has("port"))
    config.listen = args.get("host", "127.0.0.1") + ":" + std::to_string(args.integer("port", 8100));
  config.limits.max_body_bytes = static_cast<size_t>(args.integer("max-request-bytes", 8 << 20));
  config.limits.max_bundle_tasks = static_cast<size_t>(args.integer("max-bundle-tasks", 64));
  config.limits.max_queue = static_cast<size_t>(args.integer("max-queue", 256));
  config.limits.result_cache_entries = static_cast<size_t>(args.integer("result-cache-entries", 16384));
  if (config.limits.max_body_bytes < 1024 || config.limits.max_bundle_tasks < 1 || config.limits.max_queue < 1)
    throw InvalidInput("--max-request-bytes (at least 1024), --max-bundle-tasks and --max-queue must be positive");
  if (args.has("served-model-name")) {
    if (config.models.size() != 1) throw InvalidInput("--served-model-name names the one model of a models file");
    auto only = std::move(config.models.begin()->second);
    config.models.clear();
    config.models.emplace(args.get("served-model-name"), std::move(only));
  }
  if (args.has("threads")) set_compute_threads(static_cast<int>(args.integer("threads", 0)));
  return config;
}

// Past the grace, cancelled work ends at its next step (one forward); this
// long after it the process exits whatever still runs.
constexpr auto kCancelMargin = std::chrono::seconds(10);

void exit_at_the_latest(std::chrono::seconds after) {
  std::thread([after] {
    std::this_thread::sleep_for(after);
    std::fprintf(stderr, "semroute serve: requests still running %lld s after SIGTERM; exiting\n",
                 static_cast<long long>(after.count()));
    std::_Exit(1);
  }).detach();
}

std::string bearer_token(const ServeConfig& config) {
  if (config.auth_token_env.empty()) return "";
  const char* token = std::getenv(config.auth_token_env.c_str());
  if (token == nullptr || *token == '\0')
    throw InvalidInput("auth_token_env: the environment variable " + config.auth_token_env + " is not set");
  return token;
}

}  // namespace

int run_serve(const std::vector<std::string>& argv) {
  if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
    std::printf("%s\n", kServeUsage);
    return 0;
  }
  std::vector<std::string> kept;  // semroute never downloads: --offline and --accept-licence change nothing
  for (const auto& a : argv)
    if (a != "--offline" && a != "--accept-licence") kept.push_back(a);
  const Options args = parse_options(kept, kServeUsage,
                                     {"listen", "unix-socket", "grace-seconds", "models", "uds", "host", "port",
                                      "max-request-bytes", "max-bundle-tasks", "max-queue", "result-cache-entries", "cache-dir", "threads",
                                      "served-model-name"});
  ServeConfig config;
  if (args.has("models")) {
    if (!args.positional.empty()) throw InvalidInput(kServeUsage);
    config = runtime_config(args);
  } else {
    if (args.positional.size() != 1) throw InvalidInput(kServeUsage);
    config = ServeConfig::from_yaml(args.positional[0]);
    if (args.has("listen") || args.has("unix-socket")) {
      config.listen = args.get("listen");
      config.unix_socket = args.get("unix-socket");
    }
  }
  const auto grace = std::chrono::seconds(args.integer("grace-seconds", 30));
  const std::string token = bearer_token(config);

  // The signals go to this thread's sigwait, never to a worker: block them
  // before any thread (model loading, batchers, HTTP) starts.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // Loading's OpenMP team is freed after each (re)load: this thread never
  // computes, and an idle team slows every other (core/runtime.h).
  const auto service = std::make_shared<Service>(config);
  release_openmp_team();
  HttpServer server(service, config, token);
  std::string where;
  if (!server.tcp_address().empty()) where += "http://" + server.tcp_address();
  if (!config.unix_socket.empty()) where += (where.empty() ? "" : " ") + ("unix://" + config.unix_socket.string());
  std::printf("listening %s\n", where.c_str());
  std::fflush(stdout);

  for (;;) {
    int signal = 0;
    sigwait(&signals, &signal);
    if (signal == SIGHUP) {
      const std::vector<std::string> failures = service->reload_routers();
      for (const auto& failure : failures)
        std::fprintf(stderr, "semroute serve: reload failed, its old version serves on: %s\n", failure.c_str());
      std::fprintf(stderr, "semroute serve: %zu of %zu routers reloaded\n", config.routers.size() - failures.size(),
                   config.routers.size());
      release_openmp_team();
      continue;
    }
    std::fprintf(stderr, "semroute serve: stopping (%lld requests in flight)\n",
                 static_cast<long long>(server.in_flight()));
    exit_at_the_latest(grace + kCancelMargin);
    server.shutdown(grace);
    return 0;
  }
}

}  // namespace semroute::cli

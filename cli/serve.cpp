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
#include "server/service.h"

namespace semroute::cli {
namespace {

constexpr const char* kServeUsage =
    "usage: semroute serve CONFIG.yaml [--listen HOST:PORT] [--unix-socket PATH] [--grace-seconds N]\n"
    "Serves the models, unified classifiers and routers CONFIG.yaml names over HTTP/1.1 (docs/serve.md).\n"
    "--listen / --unix-socket replace the config's; port 0 picks a free port. The first line printed\n"
    "says where it listens. SIGTERM: answer the requests already sent (at most --grace-seconds, 30; then what\n"
    "still computes is cancelled) and exit.";

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
  const Options args = parse_options(argv, kServeUsage, {"listen", "unix-socket", "grace-seconds"});
  if (args.positional.size() != 1) throw InvalidInput(kServeUsage);
  ServeConfig config = ServeConfig::from_yaml(args.positional[0]);
  if (args.has("listen") || args.has("unix-socket")) {
    config.listen = args.get("listen");
    config.unix_socket = args.get("unix-socket");
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

// The semantic cache on Redis, against a real redis-server the test starts on
// loopback: two replicas (and two processes) sharing entries, capacity
// eviction, TTL, an unreachable server, and the router configured with it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "router/redis_cache.h"
#include "router/router.h"
#include "cache_test_util.h"
#include "test_util.h"

extern char** environ;

namespace semroute::test {
namespace {

// A port nobody listens on now.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Runs args[0] (looked up in PATH) with extra environment variables; `quiet`
// sends its output to /dev/null.
pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {}, bool quiet = false) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings(extra_env);
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  if (quiet) {
    ::posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int failed = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), env.data());
  ::posix_spawn_file_actions_destroy(&actions);
  return failed != 0 ? -1 : pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// redis-server on a free loopback port, without persistence, for one test.
class RedisServer {
 public:
  RedisServer() : port_(free_port()) {
    pid_ = spawn({"redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                  "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"},
                 {}, true);
    // Up when a cache can connect (at most 5 s).
    for (int i = 0; i < 100 && !up(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ~RedisServer() { stop(); }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    wait_exit(pid_);
    pid_ = -1;
  }
  int port() const { return port_; }
  bool up() const {
    try {
      make_redis_cache(4, CacheOptions{}, options());
      return true;
    } catch (const Error&) {
      return false;
    }
  }
  RedisOptions options(const std::string& prefix = "t:") const {
    RedisOptions o;
    o.port = port_;
    o.prefix = prefix;
    return o;
  }

 private:
  int port_;
  pid_t pid_ = -1;
};

CacheOptions options(size_t capacity = 100, int ttl_seconds = 0) {
  CacheOptions o;
  o.threshold = 0.9f;
  o.capacity = capacity;
  o.ttl = std::chrono::seconds(ttl_seconds);
  return o;
}

#ifdef SEMROUTE_HAVE_HIREDIS

TEST(RedisCache, TwoReplicasShareEntriesAndTheCapacity) {
  RedisServer server;
  ASSERT_TRUE(server.up()) << "redis-server did not start (scripts/install-deps.sh installs it)";
  const auto a = make_redis_cache(8, options(3), server.options());
  const auto b = make_redis_cache(8, options(3), server.options());
  EXPECT_FALSE(b->lookup("p", direction(0)));
  a->store("p", direction(0), "zero");
  const auto hit = b->lookup("p", direction(0, 0.2));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->response, "zero");
  EXPECT_NEAR(hit->similarity, std::cos(0.2), 1e-5);
  EXPECT_FALSE(b->lookup("q", direction(0)));  // another partition
  EXPECT_FALSE(b->lookup("p", direction(0, 0.6)));  // below the threshold
  // b uses "zero"; a adds three more: the least recently used of four goes.
  b->store("p", direction(2), "two");
  a->store("p", direction(4), "four");
  EXPECT_TRUE(a->lookup("p", direction(0)));  // zero used again
  a->store("p", direction(6), "six");         // evicts "two"
  EXPECT_EQ(a->size(), 3u);
  EXPECT_FALSE(b->lookup("p", direction(2)));
  EXPECT_EQ(answer(b->lookup("p", direction(6))), "six");
  EXPECT_EQ(answer(b->lookup("p", direction(0))), "zero");
  // Prefixes keep caches apart on one server.
  EXPECT_FALSE(make_redis_cache(8, options(), server.options("other:"))->lookup("p", direction(0)));
}

TEST(RedisCache, EntriesExpireInRedis) {
  RedisServer server;
  ASSERT_TRUE(server.up());
  const auto a = make_redis_cache(8, options(100, 1), server.options());
  a->store("p", direction(1), "soon gone");
  EXPECT_TRUE(a->lookup("p", direction(1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // Redis expires keys to the second
  EXPECT_FALSE(a->lookup("p", direction(1)));
}

TEST(RedisCache, AnUnreachableServerIsAMissOrAnError) {
  const int port = free_port();
  RedisOptions nowhere;
  nowhere.port = port;
  expect_error([&] { make_redis_cache(8, options(), nowhere); }, ErrorCode::kNotFound, "redis 127.0.0.1:");
  RedisServer server;
  ASSERT_TRUE(server.up());
  const auto a = make_redis_cache(8, options(), server.options());
  a->store("p", direction(1), "x");
  server.stop();
  EXPECT_FALSE(a->lookup("p", direction(1)));  // served as a miss, with a warning
  expect_error([&] { a->store("p", direction(2), "y"); }, ErrorCode::kNotFound, "redis 127.0.0.1:");
}

// Runs only as the peer process of SharedByTwoProcesses.
TEST(RedisCachePeer, ActsForAnotherProcess) {
  const char* port = std::getenv("SEMROUTE_REDIS_PEER_PORT");
  const char* role = std::getenv("SEMROUTE_REDIS_PEER_ROLE");
  if (port == nullptr || role == nullptr) GTEST_SKIP() << "the peer of RedisCache.SharedByTwoProcesses";
  RedisOptions o;
  o.port = std::atoi(port);
  o.prefix = "t:";
  const auto cache = make_redis_cache(8, options(), o);
  if (std::string(role) == "store") {
    cache->store("p", direction(3), "from the peer");
  } else {
    EXPECT_EQ(answer(cache->lookup("p", direction(5))), "from the parent");
  }
}

TEST(RedisCache, SharedByTwoProcesses) {
  RedisServer server;
  ASSERT_TRUE(server.up());
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string port = "SEMROUTE_REDIS_PEER_PORT=" + std::to_string(server.port());
  const auto peer = [&](const char* role) {
    return wait_exit(spawn({self, "--gtest_filter=RedisCachePeer.*"}, {port, std::string("SEMROUTE_REDIS_PEER_ROLE=") + role}));
  };
  ASSERT_EQ(peer("store"), 0);
  const auto here = make_redis_cache(8, options(), server.options());
  EXPECT_EQ(answer(here->lookup("p", direction(3))), "from the peer");
  here->store("p", direction(5), "from the parent");
  EXPECT_EQ(peer("lookup"), 0);
}

TEST(RedisCache, TheRouterUsesIt) {
  RedisServer server;
  ASSERT_TRUE(server.up());
  TempDir dir;
  write_file(dir / "router.yaml", "cache: {embedding_model: " + (repo_dir() / "models/multitask/base").string() +
                                      ", backend: redis, redis: {port: " + std::to_string(server.port()) +
                                      ", prefix: 'r:'}}\ndefault: {model: m, cache: true}\n");
  const auto replica1 = Router::load(dir / "router.yaml");
  const auto replica2 = Router::load(dir / "router.yaml");
  const RequestJson request{{"messages", {{{"role", "user"}, {"content", "Which enzyme unwinds DNA?"}}}}};
  const RouteResult miss = replica1->route(request);
  EXPECT_FALSE(miss.cache_hit);
  EXPECT_TRUE(replica1->store_answer(miss, R"({"id":"helicase"})"));
  const RouteResult hit = replica2->route(request);
  EXPECT_TRUE(hit.cache_hit);
  EXPECT_EQ(hit.response["id"], "helicase");
  write_file(dir / "bad.yaml", "cache: {embedding_model: " + (repo_dir() / "models/multitask/base").string() +
                                   ", backend: redis, redis: {port: " + std::to_string(free_port()) + "}}\n");
  expect_error([&] { Router::load(dir / "bad.yaml"); }, ErrorCode::kNotFound, "cache.redis: redis 127.0.0.1:");
}

#else

TEST(RedisCache, UnsupportedWithoutHiredis) {
  expect_error([] { make_redis_cache(8, options(), RedisOptions{}); }, ErrorCode::kUnsupported, "no Redis client");
}

#endif

}  // namespace
}  // namespace semroute::test

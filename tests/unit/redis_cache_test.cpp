// The semantic cache on Redis, against a real redis-server the test starts on
// loopback: two replicas (and two processes) sharing entries, capacity
// eviction, TTL, an unreachable server, and the router configured with it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>
#include <thread>

#include "router/redis_cache.h"
#include "router/router.h"
#include "cache_test_util.h"
#include "test_util.h"

extern char** environ;

namespace semroute::test {
namespace {

// A loopback TCP port bound and not listening while this lives: a
// connection to it is refused, and no other process can listen on it (a
// port found free and then released could be taken by a parallel test).
class HeldPort {
 public:
  explicit HeldPort(int port = 0) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~HeldPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  bool held() const { return fd_ >= 0; }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

// A port nobody listens on now (released at once: another process may take it).
int port_free_now() { return HeldPort().port(); }

// Runs args[0] (looked up in PATH) with extra environment variables; `quiet`
// sends its output to /dev/null.
pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {}, bool quiet = false) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings(extra_env);
  // Not the shard settings (scripts/test-shards.sh): a peer filtered to one
  // test would run it only when it happened to sit in shard 0.
  for (char** e = environ; *e != nullptr; ++e)
    if (std::string_view(*e).rfind("GTEST_", 0) != 0 || std::string_view(*e).find("SHARD") == std::string_view::npos)
      env_strings.emplace_back(*e);
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

// True once `done` holds, polled until `within` has passed.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// True when a Redis server answers PING on the Unix socket at `path`.
bool answers_ping(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const timeval second{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &second, sizeof second);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::write(fd, "PING\r\n", 6) == 6) {
    char c = 0;
    while (reply.size() < 16 && ::read(fd, &c, 1) == 1 && c != '\n') reply += c;
  }
  ::close(fd);
  return reply == "+PONG\r";
}

// redis-server on loopback, without persistence, for one test. Its TCP port
// is one found free a moment before: when another process takes it first,
// redis-server exits and another port is tried. The server also listens on
// a Unix socket of its own, where the test asks PING until it answers:
// redis-server serves nothing until every listener is open, so an answer
// there means it holds the TCP port too.
class RedisServer {
 public:
  RedisServer() {
    for (int attempt = 0; attempt < 5 && pid_ < 0; ++attempt) start(port_free_now());
  }
  ~RedisServer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::kill(pid_, SIGCONT);  // a paused one
    wait_exit(pid_);
  }
  // Stops the server answering (SIGSTOP): commands time out. It keeps its
  // port, so no other server can take it meanwhile.
  void pause() { ::kill(pid_, SIGSTOP); }
  int port() const { return port_; }
  bool up() const { return pid_ > 0 && answers_ping(socket()); }
  RedisOptions options(const std::string& prefix = "t:") const {
    RedisOptions o;
    o.port = port_;
    o.prefix = prefix;
    return o;
  }

 private:
  std::filesystem::path socket() const { return dir_ / "redis.sock"; }

  void start(int port) {
    const pid_t pid = spawn({"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1", "--unixsocket",
                             socket().string(), "--save", "", "--appendonly", "no", "--daemonize", "no",
                             "--loglevel", "warning"},
                            {}, true);
    if (pid < 0) return;
    bool exited = false;
    const auto serving_or_gone = [&] {
      exited = ::waitpid(pid, nullptr, WNOHANG) == pid;
      return exited || answers_ping(socket());
    };
    if (eventually(serving_or_gone, std::chrono::seconds(10)) && !exited) {
      pid_ = pid;
      port_ = port;
      return;
    }
    if (!exited) {
      ::kill(pid, SIGKILL);
      wait_exit(pid);
    }
  }

  TempDir dir_;
  int port_ = 0;
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
  // Redis expires keys to the second: gone within about 2 s, given 10.
  EXPECT_TRUE(eventually([&] { return !a->lookup("p", direction(1)); }, std::chrono::seconds(10)));
}

TEST(RedisCache, AnUnreachableServerIsAMissOrAnError) {
  const HeldPort refusing;
  ASSERT_TRUE(refusing.held());
  RedisOptions nowhere;
  nowhere.port = refusing.port();
  expect_error([&] { make_redis_cache(8, options(), nowhere); }, ErrorCode::kNotFound, "redis 127.0.0.1:");
  RedisServer server;
  ASSERT_TRUE(server.up());
  const auto a = make_redis_cache(8, options(), server.options());
  a->store("p", direction(1), "x");
  server.pause();  // as a server that hangs or is cut off: each command times out
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
  const HeldPort refusing;
  write_file(dir / "bad.yaml", "cache: {embedding_model: " + (repo_dir() / "models/multitask/base").string() +
                                   ", backend: redis, redis: {port: " + std::to_string(refusing.port()) + "}}\n");
  expect_error([&] { Router::load(dir / "bad.yaml"); }, ErrorCode::kNotFound, "cache.redis: redis 127.0.0.1:");
}

#else

TEST(RedisCache, UnsupportedWithoutHiredis) {
  expect_error([] { make_redis_cache(8, options(), RedisOptions{}); }, ErrorCode::kUnsupported, "no Redis client");
}

#endif

}  // namespace
}  // namespace semroute::test

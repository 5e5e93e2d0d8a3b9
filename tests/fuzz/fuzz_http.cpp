// Fuzz target: a client's bytes as `semroute serve` reads them, over its
// Unix socket: Boost.Beast's parser and the server's own checks (the request
// target's path, %-escapes and query, Host, Content-Length and chunked bodies
// against the body limit, Expect, the bearer token, x-semroute-timeout-ms and
// x-semroute-metadata), then the service. The client sends the input, closes
// its write side and reads to the end: the answer must start with a status
// line of a status from 200 to 599 (or be none: a request that computes
// stops when its client leaves), and the server must close the connection
// within its deadlines; a crash, a hang or a sanitizer report is a finding.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "fuzz_util.h"
#include "server/http_server.h"
#include "server/serve_config.h"
#include "server/service.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kToken = "fuzz-token";  // the seeds carry it, so the fuzzer keeps it

// A server on the domain model, listening on a Unix socket in a directory of
// its own, which goes with it.
struct Server {
  fs::path dir;
  std::unique_ptr<semroute::HttpServer> http;
  ~Server() {
    http.reset();
    fs::remove_all(dir);
  }
  fs::path socket() const { return dir / "serve.sock"; }
};

// Returned whole, so that the static holding it is made after libtorch's own
// (its thread pools start with the models) and goes before them at exit: a
// server stopped after them had its threads touch a freed thread pool (a
// hang, an abort or a crash in about one exit of ten).
std::unique_ptr<Server> start() {
  auto server = std::make_unique<Server>();
  server->dir = fs::temp_directory_path() / ("semroute-fuzz-http-" + std::to_string(::getpid()));
  fs::create_directories(server->dir);
  std::ofstream(server->dir / "serve.yaml")
      << "unix_socket: " << server->socket().string() << "\n"
      << "limits: {max_body_bytes: 65536, header_timeout_ms: 1000, body_timeout_ms: 1000}\n"
      << "models:\n  domain: " SEMROUTE_REPO_DIR "/models/domain\n";
  const auto config = semroute::ServeConfig::from_yaml(server->dir / "serve.yaml");
  server->http = std::make_unique<semroute::HttpServer>(std::make_shared<const semroute::Service>(config), config,
                                                        kToken);
  return server;
}

int connect_to(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) std::abort();
  timeval wait{10, 0};  // the deadlines are 1 s each: 10 s without a byte or the end is a hang
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
  return fd;
}

// The first answer's status line, past a "100 Continue": "HTTP/1.1 " (or
// 1.0, answering a 1.0 request) and a status from 200 to 599.
void check(const std::string& reply) {
  if (reply.empty()) return;  // closed unanswered: the client had left (its write side closed)
  size_t at = 0;
  if (reply.rfind("HTTP/1.1 100 ", 0) == 0) {
    at = reply.find("\r\n\r\n");
    if (at == std::string::npos) std::abort();
    at += 4;
    if (at == reply.size()) return;
  }
  if (reply.compare(at, 9, "HTTP/1.1 ") != 0 && reply.compare(at, 9, "HTTP/1.0 ") != 0) std::abort();
  const int status = std::atoi(reply.c_str() + at + 9);
  if (status < 200 || status > 599) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  semroute::fuzz::signal_handlers_on_own_stack();
  static const std::unique_ptr<Server> server = start();
  const int fd = connect_to(server->socket());
  for (size_t sent = 0; sent < size;) {  // the server may answer and close before reading it all
    const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string reply;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) std::abort();  // neither an answer nor the end: a hang
      break;  // reset: the server closed with our bytes unread
    }
    reply.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  check(reply);
  return 0;
}

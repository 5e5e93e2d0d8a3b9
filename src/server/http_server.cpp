#include "server/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/runtime.h"
#include "semroute/error.h"

namespace semroute {

namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;
using ErrorCodeT = boost::system::error_code;

namespace {

constexpr size_t kMaxHeaderBytes = 64 * 1024;                   // a larger header block: 431
constexpr auto kSweepEvery = std::chrono::milliseconds(50);      // how often deadlines are enforced
// Draining, a kept-alive connection idle this long with nothing sent is
// closed (a busy client sends its next request well within it: not dropped).
constexpr auto kDrainIdle = std::chrono::milliseconds(100);
// Past the grace, how long cancelled requests get to send their 503.
constexpr auto kCancelled = std::chrono::seconds(2);
constexpr auto kWorkerIdle = std::chrono::seconds(60);  // a worker thread without connections this long exits
constexpr size_t kLingerBytes = size_t{1} << 20;                 // read and dropped after an early answer
constexpr auto kLingerFor = std::chrono::milliseconds(500);

// Beast 1.74 speaks boost::string_view.
std::string_view view(boost::beast::string_view s) { return std::string_view(s.data(), s.size()); }

// Where a connection's request stands, for the deadlines: waiting for a
// request's first byte (a kept-alive or new connection), reading its
// headers, reading its body, or computing and writing its answer.
enum class Phase { kIdle, kHeaders, kBody, kAnswering };

}  // namespace

struct HttpServer::Connection {
  int fd = -1;
  uint64_t id = 0;
  // Guarded by the server's mutex:
  Phase phase = Phase::kIdle;
  Clock::time_point since = Clock::now();  // when the phase began
  bool timed_out = false;                   // the sweep cut its reading at a deadline
  bool shut = false;                        // the sweep shut the socket down
};

namespace {

// A connection's socket as Beast's synchronous stream concepts want it
// (send never raises SIGPIPE; a peer's close reads as end of file).
class SocketStream {
 public:
  explicit SocketStream(int fd) : fd_(fd) {}

  template <class Buffers>
  size_t read_some(const Buffers& buffers, ErrorCodeT& ec) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::mutable_buffer b = *it;
      if (b.size() == 0) continue;
      ssize_t n;
      do n = ::recv(fd_, b.data(), b.size(), 0);
      while (n < 0 && errno == EINTR);
      if (n == 0) ec = boost::asio::error::eof;
      else if (n < 0) ec.assign(errno, boost::system::system_category());
      else ec = {};
      return n > 0 ? static_cast<size_t>(n) : 0;
    }
    ec = {};
    return 0;
  }
  template <class Buffers>
  size_t read_some(const Buffers& buffers) {
    return or_throw([&](ErrorCodeT& ec) { return read_some(buffers, ec); });
  }

  template <class Buffers>
  size_t write_some(const Buffers& buffers, ErrorCodeT& ec) {
    iovec parts[16];
    size_t count = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && count < 16; ++it) {
      const boost::asio::const_buffer b = *it;
      parts[count++] = iovec{const_cast<void*>(b.data()), b.size()};
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = count;
    ssize_t n;
    do n = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
      ec.assign(errno, boost::system::system_category());
      return 0;
    }
    ec = {};
    return static_cast<size_t>(n);
  }
  template <class Buffers>
  size_t write_some(const Buffers& buffers) {
    return or_throw([&](ErrorCodeT& ec) { return write_some(buffers, ec); });
  }

 private:
  // The throwing form of an operation that reports through an error code.
  template <class Io>
  static size_t or_throw(Io io) {
    ErrorCodeT ec;
    const size_t n = io(ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  int fd_;
};

// Constant time in the token's length: a wrong token takes as long to
// refuse wherever it differs.
bool same_token(std::string_view given, const std::string& token) {
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

bool exempt_from_auth(std::string_view path) { return path == "/health" || path == "/health/live" || path == "/ready"; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A percent-encoded piece of a request target, decoded; InvalidInput for a
// broken escape or a control byte (NUL included) once decoded: "/health%00x"
// must not be served as "/health".
std::string percent_decoded(std::string_view text, const char* what) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      const int hi = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? hex_digit(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) throw InvalidInput(std::string(what) + ": a broken %-escape");
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      throw InvalidInput(std::string(what) + ": a control byte (" + std::to_string(static_cast<int>(c)) + ")");
    out += c;
  }
  return out;
}

// The path the service routes: the target's path decoded, and its `router`
// query value if any ("/v1/route?router=main").
std::string service_path(std::string_view target) {
  if (target.empty() || target[0] != '/') throw InvalidInput("the request target must be a path starting with '/'");
  const size_t q = target.find('?');
  std::string path = percent_decoded(target.substr(0, q), "the path");
  if (q == std::string_view::npos) return path;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    const std::string key = percent_decoded(pair.substr(0, eq), "the query");
    const std::string value = eq == std::string_view::npos ? "" : percent_decoded(pair.substr(eq + 1), "the query");
    if (key == "router") path += "?router=" + value;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return path;
}

// True once the peer closed its end (or the socket failed): the request's
// work can stop, nobody will read its answer.
bool peer_gone(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

void set_timeout(int fd, int option, int64_t ms) {
  const timeval tv{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

sockaddr_in tcp_address_of(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host.empty() || host == "localhost") host = "127.0.0.1";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    throw LoadError("listen: '" + host + "' is not an IPv4 address (e.g. 127.0.0.1, 0.0.0.0)");
  char* end = nullptr;
  const unsigned long p = std::strtoul(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p > 65535) throw LoadError("listen: '" + port + "' is not a port");
  addr.sin_port = htons(static_cast<uint16_t>(p));
  return addr;
}

int tcp_listener(const std::string& listen, std::string& bound) {
  const sockaddr_in addr = tcp_address_of(listen);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw LoadError("listen: " + std::string(std::strerror(errno)));
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 1024) != 0) {
    ::close(fd);
    throw LoadError("listen: cannot listen on " + listen + " (in use, or not allowed)");
  }
  sockaddr_in got{};
  socklen_t length = sizeof(got);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&got), &length);
  char host[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &addr.sin_addr, host, sizeof(host));
  bound = std::string(host) + ":" + std::to_string(ntohs(got.sin_port));
  return fd;
}

// A listening Unix socket at `path` with `mode`; a stale socket file (nothing
// listening) is replaced, a live one is an error.
int unix_listener(const std::string& path, unsigned mode) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) throw LoadError("unix_socket: path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw LoadError("unix_socket: " + std::string(std::strerror(errno)));
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      ::close(fd);
      throw LoadError("unix_socket: " + path + " exists and is not a socket");
    }
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      ::close(fd);
      throw LoadError("unix_socket: a server already listens on " + path);
    }
    ::unlink(path.c_str());
  }
  const mode_t old = ::umask(0777 & ~mode);
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::umask(old);
  if (!bound || ::chmod(path.c_str(), mode) != 0 || ::listen(fd, 1024) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw LoadError("unix_socket: " + path + ": " + why);
  }
  return fd;
}

using Request = http::request<http::string_body>;

// Writes `reply` (HTTP/1.1 unless the request was 1.0); false when the peer is gone.
bool write_reply(SocketStream& stream, Reply reply, unsigned version, bool keep_alive) {
  http::response<http::string_body> response{static_cast<http::status>(reply.status), version};
  response.set(http::field::content_type, reply.content_type);
  for (const auto& [name, value] : reply.headers) response.set(name, value);
  response.keep_alive(keep_alive);
  response.body() = std::move(reply.body);
  response.prepare_payload();
  ErrorCodeT ec;
  http::write(stream, response, ec);
  return !ec;
}

// After an answer sent before the request's body was read (401, 413, a
// malformed request): stop writing, read for a moment what the client still
// sends, then close, so the kernel does not reset the connection (and lose
// the answer) over unread bytes.
void linger_close(int fd) {
  ::shutdown(fd, SHUT_WR);
  set_timeout(fd, SO_RCVTIMEO, kLingerFor.count());
  char sink[16384];
  size_t dropped = 0;
  const auto until = Clock::now() + kLingerFor;
  while (dropped < kLingerBytes && Clock::now() < until) {
    const ssize_t n = ::recv(fd, sink, sizeof(sink), 0);
    if (n <= 0) break;
    dropped += static_cast<size_t>(n);
  }
}

// The answer to a request that could not be read whole, or none when the
// connection just ended (the client left, or idled out between requests).
std::optional<Reply> read_failure(const ErrorCodeT& ec, bool timed_out, Phase phase, const ServeLimits& limits) {
  if (timed_out && phase != Phase::kIdle)
    return error_reply(408, "request_timeout",
                       phase == Phase::kBody ? "the body did not arrive within " + std::to_string(limits.body_timeout_ms) + " ms"
                                             : "the headers did not arrive within " +
                                                   std::to_string(limits.header_timeout_ms) + " ms");
  if (ec == http::error::header_limit)
    return error_reply(431, "header_too_large", "the header block is larger than " + std::to_string(kMaxHeaderBytes) + " bytes");
  if (ec == http::error::body_limit)
    return error_reply(413, "request_too_large", "the body is larger than " + std::to_string(limits.max_body_bytes) + " bytes");
  const bool malformed = ec.category() == http::make_error_code(http::error::bad_target).category() &&
                         ec != http::error::end_of_stream && ec != http::error::partial_message &&
                         ec != http::error::short_read;
  if (malformed) return error_reply(400, "invalid_request", "a malformed HTTP request: " + ec.message());
  return std::nullopt;
}

// What the headers alone refuse: 400 for a missing Host (HTTP/1.1) or a
// target that does not decode cleanly; 401 without the token. Otherwise
// `path` is what the service routes.
std::optional<Reply> refusal(const Request& request, const std::string& token, std::string& path) {
  if (request.version() >= 11 && request.find(http::field::host) == request.end())
    return error_reply(400, "invalid_request", "HTTP/1.1 requires a Host header");
  try {
    path = service_path(view(request.target()));
  } catch (const Error& e) {
    return error_reply(400, "invalid_argument", e.what());
  }
  if (!token.empty() && !exempt_from_auth(path.substr(0, path.find('?')))) {
    const auto auth = request.find(http::field::authorization);
    const std::string_view given = auth == request.end() ? std::string_view() : view(auth->value());
    if (given.substr(0, 7) != "Bearer " || !same_token(given.substr(7), token)) {
      Reply r = error_reply(401, "unauthorized", "a valid bearer token is required");
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      return r;
    }
  }
  return std::nullopt;
}

// x-semroute-timeout-ms, x-semroute-metadata and the arrival time, for the service.
std::optional<Reply> request_info(const Request& request, RequestInfo& info) {
  if (const auto m = request.find("x-semroute-metadata"); m != request.end()) info.metadata_json = view(m->value());
  if (const auto t = request.find("x-semroute-timeout-ms"); t != request.end()) {
    const std::string value(view(t->value()));
    char* end = nullptr;
    const long long ms = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || ms <= 0 || ms > 3'600'000)
      return error_reply(400, "invalid_argument", "x-semroute-timeout-ms: milliseconds in [1, 3600000]");
    info.timeout_ms = ms;
  }
  return std::nullopt;
}

// Counts a request in flight while it lives.
struct InFlight {
  explicit InFlight(std::atomic<int64_t>& n) : n_(n) { n_.fetch_add(1); }
  ~InFlight() { n_.fetch_sub(1); }
  std::atomic<int64_t>& n_;
};

}  // namespace

HttpServer::HttpServer(std::shared_ptr<const Service> service, const ServeConfig& config, std::string token)
    : service_(std::move(service)), limits_(config.limits), token_(std::move(token)) {
  try {
    if (!config.listen.empty()) listeners_.push_back(tcp_listener(config.listen, tcp_address_));
    if (!config.unix_socket.empty()) {
      unix_socket_ = config.unix_socket.string();
      listeners_.push_back(unix_listener(unix_socket_, config.socket_mode));
    }
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) throw LoadError("serve: cannot make a pipe");
    for (const int fd : listeners_) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  } catch (...) {
    for (const int fd : listeners_) ::close(fd);
    if (!unix_socket_.empty()) ::unlink(unix_socket_.c_str());
    throw;
  }
  acceptor_ = std::thread([this] { accept_loop(); });
}

HttpServer::~HttpServer() {
  shutdown(std::chrono::milliseconds(0));
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void HttpServer::accept_loop() {
  for (;;) {
    std::vector<pollfd> fds{{wake_[0], POLLIN, 0}};
    for (const int fd : listeners_) fds.push_back({fd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), static_cast<int>(kSweepEvery.count()));
    char drained[64];
    while (::read(wake_[0], drained, sizeof(drained)) > 0) {
    }
    if (draining_ && !listeners_.empty()) {
      // What the kernel accepted before we stopped is served (its request
      // may be on the way); then the listeners close and new clients are refused.
      for (const int fd : listeners_) {
        accept_waiting(fd);
        ::close(fd);
      }
      listeners_.clear();
      if (!unix_socket_.empty()) ::unlink(unix_socket_.c_str());
    }
    for (size_t i = 1; i < fds.size(); ++i)
      if (!draining_ && (fds[i].revents & POLLIN)) accept_waiting(fds[i].fd);
    enforce_deadlines();
    if (acceptor_stop_) return;
  }
}

// Accepts every connection `listen_fd` (non-blocking) has waiting; past
// max_connections one is closed at once.
void HttpServer::accept_waiting(int listen_fd) {
  for (;;) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    auto connection = std::make_shared<Connection>();
    connection->fd = fd;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (connections_.size() >= limits_.max_connections) {
        ::close(fd);
        continue;
      }
      connection->id = next_id_++;
      connections_.emplace(connection->id, connection);
    }
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));  // (fails harmlessly on a Unix socket)
    set_timeout(fd, SO_SNDTIMEO, limits_.body_timeout_ms);       // a client that never reads is let go
    dispatch(connection);
  }
}

void HttpServer::dispatch(std::shared_ptr<Connection> connection) {
  const std::lock_guard<std::mutex> lock(mutex_);
  waiting_.push_back(std::move(connection));
  if (idle_workers_ > waiting_.size() - 1) {
    work_ready_.notify_one();
    return;
  }
  ++workers_;
  std::thread([this] { work(); }).detach();
}

void HttpServer::work() {
  compute_serially_on_this_thread();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ++idle_workers_;
    const bool woken = work_ready_.wait_for(lock, kWorkerIdle, [&] { return !waiting_.empty() || workers_stop_; });
    --idle_workers_;
    if (!woken || waiting_.empty()) break;
    const std::shared_ptr<Connection> connection = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    serve(connection);
    lock.lock();
  }
  if (--workers_ == 0) workers_done_.notify_all();
}

// Cuts the reading of a request past its deadline (the reader answers 408),
// and while draining closes connections idle between requests.
void HttpServer::enforce_deadlines() {
  const auto now = Clock::now();
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [id, c] : connections_) {
    if (c->shut) continue;
    int64_t limit_ms = 0;
    if (c->phase == Phase::kIdle || c->phase == Phase::kHeaders) limit_ms = limits_.header_timeout_ms;
    if (c->phase == Phase::kBody) limit_ms = limits_.body_timeout_ms;
    if (limit_ms > 0 && now - c->since > std::chrono::milliseconds(limit_ms)) {
      c->timed_out = true;
      c->shut = true;
      ::shutdown(c->fd, SHUT_RD);  // its reader sees the end, then answers 408
    } else if (draining_ && c->phase == Phase::kIdle && now - c->since >= kDrainIdle && !readable(c->fd)) {
      c->shut = true;
      ::shutdown(c->fd, SHUT_RDWR);
    }
  }
}

void HttpServer::serve(const std::shared_ptr<Connection>& c) {
  SocketStream stream(c->fd);
  // An answer before the service saw the request (malformed, too slow, too
  // large, unauthorized): counted in /metrics under the endpoint "http".
  const auto refuse = [&](SocketStream& out, const Reply& reply, unsigned version) {
    service_->metrics().record("http", reply.status, 0);
    write_reply(out, reply, version, false);
  };
  boost::beast::flat_buffer buffer(kMaxHeaderBytes + limits_.max_body_bytes + 4096);
  const auto enter = [&](Phase phase, bool restart_clock) {
    const std::lock_guard<std::mutex> lock(mutex_);
    c->phase = phase;
    if (restart_clock) c->since = Clock::now();
  };
  const auto timed_out = [&] {
    const std::lock_guard<std::mutex> lock(mutex_);
    return c->timed_out;
  };
  bool linger = false;
  for (;;) {
    if (buffer.size() == 0) {  // wait for the next request's first byte
      pollfd p{c->fd, POLLIN, -1};
      if (::poll(&p, 1, -1) < 0 && errno != EINTR) break;
    }
    enter(Phase::kHeaders, true);
    http::request_parser<http::string_body> parser;
    parser.header_limit(kMaxHeaderBytes);
    parser.body_limit(limits_.max_body_bytes);
    ErrorCodeT ec;
    http::read_header(stream, buffer, parser, ec);
    if (ec) {
      if (const auto reply = read_failure(ec, timed_out(), buffer.size() == 0 && ec == http::error::end_of_stream
                                                               ? Phase::kIdle : Phase::kHeaders, limits_)) {
        refuse(stream, *reply, 11);
        linger = true;
      }
      break;
    }
    const InFlight counted(in_flight_);
    RequestInfo info;
    info.arrived = Clock::now();
    const Request& request = parser.get();
    std::string path;
    if (auto refused = refusal(request, token_, path)) {
      refuse(stream, *refused, request.version());
      linger = true;
      break;
    }
    if (const auto expect = request.find(http::field::expect);
        expect != request.end() && boost::beast::iequals(expect->value(), "100-continue")) {
      ErrorCodeT ignored;
      boost::asio::write(stream, boost::asio::buffer(std::string_view("HTTP/1.1 100 Continue\r\n\r\n")), ignored);
    }
    enter(Phase::kBody, true);
    http::read(stream, buffer, parser, ec);
    if (ec) {
      if (const auto reply = read_failure(ec, timed_out(), Phase::kBody, limits_)) {
        refuse(stream, *reply, request.version());
        linger = true;
      }
      break;
    }
    enter(Phase::kAnswering, false);
    const bool keep_alive = request.keep_alive();
    Reply reply;
    if (auto bad = request_info(request, info)) {
      reply = std::move(*bad);
    } else {
      const int fd = c->fd;
      info.cancelled = [this, fd] { return cancelling_.load() || peer_gone(fd); };
      reply = service_->handle(view(request.method_string()), path, request.body(), info);
    }
    // Draining, this answer is the connection's last and says so: its client
    // sends nothing more here.
    const bool last = !keep_alive || draining_;
    if (!write_reply(stream, std::move(reply), request.version(), !last) || last) break;
    enter(Phase::kIdle, true);
  }
  if (linger) linger_close(c->fd);
  const std::lock_guard<std::mutex> lock(mutex_);
  ::close(c->fd);
  connections_.erase(c->id);
  if (connections_.empty()) all_closed_.notify_all();
}

void HttpServer::shutdown(std::chrono::milliseconds grace) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopped_) return;
  stopped_ = true;
  draining_ = true;  // the acceptor serves its backlog, closes the listeners, then idle connections
  lock.unlock();
  wake_acceptor();
  lock.lock();
  const auto closed = [&] { return connections_.empty(); };
  if (!all_closed_.wait_until(lock, Clock::now() + grace, closed)) {
    // Past the grace: what computes stops at its next step and answers 503;
    // what is still being read is cut.
    cancelling_ = true;
    shut_down_connections(/*answering_too=*/false);
    if (!all_closed_.wait_until(lock, Clock::now() + kCancelled, closed)) {
      shut_down_connections(/*answering_too=*/true);
      all_closed_.wait(lock, closed);
    }
  }
  lock.unlock();
  acceptor_stop_ = true;
  wake_acceptor();
  acceptor_.join();
  lock.lock();
  workers_stop_ = true;
  work_ready_.notify_all();
  workers_done_.wait(lock, [&] { return workers_ == 0; });
}

void HttpServer::shut_down_connections(bool answering_too) {
  for (auto& [id, c] : connections_) {
    if (c->shut || (c->phase == Phase::kAnswering && !answering_too)) continue;
    c->shut = true;
    ::shutdown(c->fd, SHUT_RDWR);
  }
}

void HttpServer::wake_acceptor() {
  const char byte = 'x';
  while (::write(wake_[1], &byte, 1) < 0 && errno == EINTR) {
  }
}

}  // namespace semroute

#include "server/http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "semroute/error.h"

namespace semroute {

struct HttpServer::Listener {
  MHD_Daemon* daemon = nullptr;
  int socket = -1;  // ours for a Unix socket (MHD does not own it)
};

namespace {

// One request while it arrives: its body, and whether it outgrew the limit.
struct RequestState {
  std::chrono::steady_clock::time_point arrived = std::chrono::steady_clock::now();  // its headers
  std::string body;
  bool too_large = false;
  bool answered = false;  // a response was queued early (401, 413)
};

// Constant time in the token's length: a wrong token takes as long to
// refuse wherever it differs.
bool same_token(const std::string& given, const std::string& token) {
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

MHD_Result send(MHD_Connection* connection, const Reply& reply) {
  MHD_Response* response = MHD_create_response_from_buffer(reply.body.size(), const_cast<char*>(reply.body.data()),
                                                           MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, "Content-Type", reply.content_type.c_str());
  for (const auto& [name, value] : reply.headers) MHD_add_response_header(response, name.c_str(), value.c_str());
  const MHD_Result queued = MHD_queue_response(connection, static_cast<unsigned>(reply.status), response);
  MHD_destroy_response(response);
  return queued;
}

const char* header(MHD_Connection* connection, const char* name) {
  return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

bool exempt_from_auth(std::string_view url) { return url == "/health" || url == "/ready"; }

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

}  // namespace

// libmicrohttpd's callbacks, with access to the server.
struct HttpCallbacks {
  static MHD_Result access(void* cls, MHD_Connection* connection, const char* url, const char* method,
                           const char* /*version*/, const char* upload_data, size_t* upload_size, void** state_slot) {
    auto* server = static_cast<HttpServer*>(cls);
    auto* state = static_cast<RequestState*>(*state_slot);
    if (state == nullptr) {  // the headers are in: decide before reading a body
      state = new RequestState();
      *state_slot = state;
      server->in_flight_.fetch_add(1);
      if (!server->token_.empty() && !exempt_from_auth(url)) {
        const char* auth = header(connection, "Authorization");
        const std::string given = auth != nullptr && std::strncmp(auth, "Bearer ", 7) == 0 ? auth + 7 : "";
        if (!same_token(given, server->token_)) {
          state->answered = true;
          Reply r = error_reply(401, "unauthorized", "a valid bearer token is required");
          r.headers.emplace_back("WWW-Authenticate", "Bearer");
          return send(connection, r);
        }
      }
      if (const char* length = header(connection, "Content-Length")) {
        const unsigned long long n = std::strtoull(length, nullptr, 10);
        if (n > server->limits_.max_body_bytes) {
          state->answered = true;
          return send(connection, error_reply(413, "too_long", "the body is larger than " +
                                                                     std::to_string(server->limits_.max_body_bytes) +
                                                                     " bytes"));
        }
      }
      return MHD_YES;
    }
    if (*upload_size != 0) {  // a piece of the body
      if (!state->answered && !state->too_large) {
        if (state->body.size() + *upload_size > server->limits_.max_body_bytes) {
          state->too_large = true;
          state->body.clear();
          state->body.shrink_to_fit();
        } else {
          state->body.append(upload_data, *upload_size);
        }
      }
      *upload_size = 0;
      return MHD_YES;
    }
    if (state->answered) return MHD_YES;
    if (state->too_large)
      return send(connection, error_reply(413, "too_long", "the body is larger than " +
                                                               std::to_string(server->limits_.max_body_bytes) + " bytes"));
    std::string path = url;
    if (const char* router = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "router"))
      path += std::string("?router=") + router;
    RequestInfo info;
    info.arrived = state->arrived;
    if (const char* metadata = header(connection, "x-semroute-metadata")) info.metadata_json = metadata;
    if (const char* timeout = header(connection, "x-semroute-timeout-ms")) {
      char* end = nullptr;
      const long long ms = std::strtoll(timeout, &end, 10);
      if (end == timeout || *end != '\0' || ms <= 0 || ms > 3'600'000)
        return send(connection, error_reply(400, "invalid_argument", "x-semroute-timeout-ms: milliseconds in [1, 3600000]"));
      info.timeout_ms = ms;
    }
    return send(connection, server->service_->handle(method, path, state->body, info));
  }

  static void completed(void* cls, MHD_Connection*, void** state_slot, MHD_RequestTerminationCode) {
    auto* server = static_cast<HttpServer*>(cls);
    if (auto* state = static_cast<RequestState*>(*state_slot)) {
      delete state;
      *state_slot = nullptr;
      server->in_flight_.fetch_sub(1);
    }
  }
};

namespace {

constexpr unsigned kDaemonFlags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                                  MHD_USE_ITC;  // poll: no FD_SETSIZE cap; ITC: quiesce

MHD_Daemon* start_daemon(HttpServer* server, const ServeLimits& limits, const sockaddr* address, int listen_fd) {
  const unsigned timeout_s = static_cast<unsigned>(std::max<int64_t>(1, (limits.header_timeout_ms + 999) / 1000));
  if (listen_fd >= 0)
    return MHD_start_daemon(kDaemonFlags, 0, nullptr, nullptr, &HttpCallbacks::access, server, MHD_OPTION_LISTEN_SOCKET,
                            listen_fd, MHD_OPTION_NOTIFY_COMPLETED, &HttpCallbacks::completed, server,
                            MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(limits.max_connections),
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            static_cast<size_t>(64 * 1024), MHD_OPTION_END);
  return MHD_start_daemon(kDaemonFlags, 0, nullptr, nullptr, &HttpCallbacks::access, server, MHD_OPTION_SOCK_ADDR,
                          address, MHD_OPTION_NOTIFY_COMPLETED, &HttpCallbacks::completed, server,
                          MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(limits.max_connections),
                          MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                          static_cast<size_t>(64 * 1024), MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u, MHD_OPTION_END);
}

}  // namespace

HttpServer::HttpServer(std::shared_ptr<const Service> service, const ServeConfig& config, std::string token)
    : service_(std::move(service)), limits_(config.limits), token_(std::move(token)) {
  if (!config.listen.empty()) {
    const sockaddr_in addr = tcp_address_of(config.listen);
    auto l = std::make_unique<Listener>();
    l->daemon = start_daemon(this, limits_, reinterpret_cast<const sockaddr*>(&addr), -1);
    if (l->daemon == nullptr) throw LoadError("listen: cannot listen on " + config.listen + " (in use, or not allowed)");
    const MHD_DaemonInfo* info = MHD_get_daemon_info(l->daemon, MHD_DAEMON_INFO_BIND_PORT);
    char host[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &addr.sin_addr, host, sizeof(host));
    tcp_address_ = std::string(host) + ":" + std::to_string(info != nullptr ? info->port : ntohs(addr.sin_port));
    listeners_.push_back(std::move(l));
  }
  if (!config.unix_socket.empty()) {
    auto l = std::make_unique<Listener>();
    unix_socket_ = config.unix_socket.string();
    l->socket = unix_listener(unix_socket_, config.socket_mode);
    l->daemon = start_daemon(this, limits_, nullptr, l->socket);
    if (l->daemon == nullptr) {
      ::close(l->socket);
      throw LoadError("unix_socket: cannot serve on " + unix_socket_);
    }
    listeners_.push_back(std::move(l));
  }
}

HttpServer::~HttpServer() { shutdown(std::chrono::milliseconds(0)); }

void HttpServer::shutdown(std::chrono::milliseconds grace) {
  if (stopped_) return;
  stopped_ = true;
  for (auto& l : listeners_) {  // no new connections from here on
    const MHD_socket fd = MHD_quiesce_daemon(l->daemon);
    if (fd != MHD_INVALID_SOCKET && l->socket < 0) ::close(fd);
  }
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  for (auto& l : listeners_) {
    MHD_stop_daemon(l->daemon);
    if (l->socket >= 0) ::close(l->socket);
  }
  if (!unix_socket_.empty()) ::unlink(unix_socket_.c_str());
}

}  // namespace semroute

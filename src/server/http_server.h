// HTTP/1.1 for the service, on GNU libmicrohttpd (chosen by measurement:
// docs/serve.md): a thread per connection (so concurrent requests meet in a
// model's dynamic batcher), a cap on connections (excess ones are closed at
// once), a header memory limit, an idle timeout for slow clients, a body
// limit checked from Content-Length before the body is read, an optional
// bearer token compared in constant time, TCP and/or a Unix socket, and a
// graceful shutdown: stop accepting, finish the requests in flight, close.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "server/service.h"

struct MHD_Daemon;

namespace semroute {

class HttpServer {
 public:
  // Binds every listener the config names (LoadError on failure; an existing
  // Unix socket file is replaced only when nothing listens on it).
  HttpServer(std::shared_ptr<const Service> service, const ServeConfig& config, std::string token = "");
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The TCP address bound ("127.0.0.1:43117" for a requested port 0); "" without TCP.
  const std::string& tcp_address() const { return tcp_address_; }
  // Requests being read or answered now.
  int64_t in_flight() const { return in_flight_.load(); }

  // Stops accepting (new connections are refused), waits up to `grace` for
  // the requests in flight, then closes every connection. Idempotent.
  void shutdown(std::chrono::milliseconds grace);

  struct Listener;  // one libmicrohttpd daemon (public for its C callbacks)

 private:
  std::shared_ptr<const Service> service_;
  ServeLimits limits_;
  std::string token_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::string tcp_address_;
  std::string unix_socket_;
  mutable std::atomic<int64_t> in_flight_{0};
  bool stopped_ = false;

  friend struct HttpCallbacks;
};

}  // namespace semroute

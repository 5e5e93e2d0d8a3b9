// HTTP/1.1 for the service, on Boost.Beast's parser and serializer (chosen
// for its strict parsing and because we own the socket: docs/serve.md): a
// thread per connection (so concurrent requests meet in a model's dynamic
// batcher), a cap on connections (excess ones are closed at once), a
// deadline for each request's headers and one for its body (a client that
// sends a byte at a time is cut at the deadline, not kept while it trickles),
// a body limit checked from Content-Length before the body is read, an
// optional bearer token compared in constant time, TCP and/or a Unix socket,
// and a graceful shutdown: stop accepting, answer what was sent (on
// kept-alive connections too, each answer then saying `Connection: close`),
// close idle connections, and past the grace cancel what still computes.
//
// Bytes are checked before the service sees them: malformed request lines,
// header fields, Content-Length values or chunk sizes, NUL or control bytes
// anywhere in the path, query or a header value, and HTTP/1.1 without Host
// are answered 400 and the connection is closed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/service.h"

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

  // Stops accepting (new connections are refused) and closes idle
  // connections; answers the requests already sent for up to `grace`, then
  // cancels what still computes (503) and closes every connection. Returns
  // once every connection's thread has ended. Idempotent.
  void shutdown(std::chrono::milliseconds grace);

  struct Connection;  // one accepted socket and where its request stands

 private:
  void accept_loop();
  void accept_waiting(int listen_fd);
  void serve(const std::shared_ptr<Connection>& connection);
  // Hands a connection to an idle worker thread, or to a new one.
  void dispatch(std::shared_ptr<Connection> connection);
  void work();  // a worker: serves connections until none came for kWorkerIdle
  void enforce_deadlines();  // the accept thread's sweep, every 50 ms
  void wake_acceptor();
  void shut_down_connections(bool answering_too);  // with mutex_ held

  std::shared_ptr<const Service> service_;
  ServeLimits limits_;
  std::string token_;
  std::vector<int> listeners_;
  int wake_[2] = {-1, -1};  // a pipe that interrupts the accept thread's poll
  std::string tcp_address_;
  std::string unix_socket_;
  std::thread acceptor_;

  mutable std::mutex mutex_;
  std::condition_variable all_closed_;
  std::map<uint64_t, std::shared_ptr<Connection>> connections_;
  // Worker threads are kept between connections: a thread's first tensor
  // work re-creates libtorch's thread pools (~10 ms on 2 CPUs), which a
  // client opening a connection per request paid on every request.
  std::condition_variable work_ready_, workers_done_;
  std::deque<std::shared_ptr<Connection>> waiting_;
  size_t workers_ = 0, idle_workers_ = 0;
  bool workers_stop_ = false;
  uint64_t next_id_ = 0;
  std::atomic<int64_t> in_flight_{0};
  std::atomic<bool> draining_{false};    // no new connections; answers say Connection: close
  std::atomic<bool> cancelling_{false};  // past the grace: work in flight ends at its next step
  std::atomic<bool> acceptor_stop_{false};
  bool stopped_ = false;
};

}  // namespace semroute

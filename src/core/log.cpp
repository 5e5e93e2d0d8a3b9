#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace semroute {
namespace {

LogLevel level_from_env() {
  const char* v = std::getenv("SEMROUTE_LOG_LEVEL");
  if (v == nullptr) return LogLevel::kWarning;
  if (std::strcmp(v, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(v, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(v, "error") == 0) return LogLevel::kError;
  if (std::strcmp(v, "off") == 0) return LogLevel::kOff;
  return LogLevel::kWarning;
}

std::atomic<LogLevel>& level_slot() {
  static std::atomic<LogLevel> level{level_from_env()};
  return level;
}

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}

LogSink& sink_slot() {
  static LogSink sink;
  return sink;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: break;
  }
  return "";
}

}  // namespace

void set_log_level(LogLevel level) { level_slot().store(level); }
LogLevel log_level() { return level_slot().load(); }

void set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  sink_slot() = std::move(sink);
}

void log_message(LogLevel level, const std::string& message) {
  if (level < log_level() || level == LogLevel::kOff) return;
  std::lock_guard<std::mutex> lock(sink_mutex());
  if (sink_slot()) {
    sink_slot()(level, message);
  } else {
    std::fprintf(stderr, "semroute %s: %s\n", level_name(level), message.c_str());
  }
}

}  // namespace semroute

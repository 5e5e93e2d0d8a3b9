// Minimal leveled logging to stderr (or a caller-installed sink). The level
// starts from SEMROUTE_LOG_LEVEL (debug, info, warning, error, off; default warning).
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>

namespace semroute {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

using LogSink = std::function<void(LogLevel, const std::string&)>;

void set_log_level(LogLevel level);
LogLevel log_level();
// Replaces the stderr sink; an empty sink restores it.
void set_log_sink(LogSink sink);
void log_message(LogLevel level, const std::string& message);

template <typename... Args>
void log_at(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (level >= log_level()) log_message(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace semroute

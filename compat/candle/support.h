// What every entry point of the drop-in shares: the guard that keeps
// exceptions from crossing the C boundary (a log line and the documented
// failure value instead), write-once process-wide model slots, argument
// reading, and the malloc'd strings and arrays the free functions release.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "candle_api.h"
#include "semroute/semroute.hpp"

namespace candle {

// One line on stderr: "semroute-candle: <function>: <message>".
void log_line(const char* function, std::string_view message);

// A failure the entry point reports with its documented failure value.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs body; whatever it throws is logged and `failure` returned instead.
template <class R, class Body>
R guarded(const char* function, R failure, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    log_line(function, e.what());
  } catch (...) {
    log_line(function, "unknown error");
  }
  return failure;
}

// Text arguments: NUL-terminated, UTF-8 (semroute checks), never NULL.
std::string_view text_arg(const char* text, const char* what);
// A model directory argument: a local directory (semroute does not download).
std::string directory_arg(const char* path, const char* what);
// Texts [0, count) of a C array of strings.
std::vector<std::string_view> texts_arg(const char* const* texts, int count, const char* what);

// Heap copies released by the library's free functions (malloc / free).
char* copy_string(std::string_view s);
template <class T>
T* copy_array(const std::vector<T>& values) {
  if (values.empty()) return nullptr;
  T* out = static_cast<T*>(std::malloc(values.size() * sizeof(T)));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, values.data(), values.size() * sizeof(T));
  return out;
}
// Zeroed array of n structs (freed with std::free).
template <class T>
T* zeroed_array(size_t n) {
  if (n == 0) return nullptr;
  T* out = static_cast<T*>(std::calloc(n, sizeof(T)));
  if (out == nullptr) throw std::bad_alloc();
  return out;
}
void free_strings(char** strings, int count);

// A process-wide model slot: set at most once, read without locks, never
// replaced or freed (the upstream library's contract: nothing is unloaded).
template <class T>
class Slot {
 public:
  enum class Init { kLoaded, kAlready };

  const T* get() const { return value_.load(std::memory_order_acquire); }
  bool is_set() const { return get() != nullptr; }

  // Runs `load` (returning std::unique_ptr<T>) unless the slot is set;
  // concurrent first calls load once. What `load` throws propagates.
  template <class Load>
  Init init(Load&& load) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (is_set()) return Init::kAlready;
    value_.store(load().release(), std::memory_order_release);
    return Init::kLoaded;
  }

  // The value, or Failure naming what is not initialised.
  const T& require(const char* what) const {
    const T* v = get();
    if (v == nullptr) throw Failure(std::string(what) + " is not initialised");
    return *v;
  }

 private:
  std::atomic<T*> value_{nullptr};
  std::mutex mutex_;
};

// How a second init of a set slot answers: upstream differs per function.
enum class WhenSet { kFalse, kTrue };

// The shared shape of `bool init_*(path, use_cpu)`: loads into `slot` once.
template <class T, class Load>
bool init_slot(const char* function, Slot<T>& slot, WhenSet when_set, Load&& load) noexcept {
  return guarded(function, false, [&] {
    if (slot.init(load) == Slot<T>::Init::kLoaded) return true;
    if (when_set == WhenSet::kFalse) log_line(function, "already initialised; the first model stays");
    return when_set == WhenSet::kTrue;
  });
}

// Byte offsets moved out to whole UTF-8 characters (a byte-level token may
// start or end inside one), so that every range slices valid text.
inline size_t char_start(std::string_view text, size_t at) {
  while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}
inline size_t char_end(std::string_view text, size_t at) {
  while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  return at;
}

// Words separated by whitespace (upstream's sequence_length of embeddings).
int word_count(std::string_view text);

}  // namespace candle

#include "support.h"

#include <sys/stat.h>

#include <cstdio>

namespace candle {

void log_line(const char* function, std::string_view message) {
  std::fprintf(stderr, "semroute-candle: %s: %.*s\n", function, static_cast<int>(message.size()), message.data());
}

std::string_view text_arg(const char* text, const char* what) {
  if (text == nullptr) throw Failure(std::string(what) + " is NULL");
  return text;
}

std::string directory_arg(const char* path, const char* what) {
  const std::string p(text_arg(path, what));
  struct stat st {};
  if (p.empty() || ::stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Failure(std::string(what) + " '" + p +
                  "' is not a directory: semroute loads local model directories (config.json, "
                  "model.safetensors, tokenizer.json); Hugging Face ids are not downloaded");
  return p;
}

std::vector<std::string_view> texts_arg(const char* const* texts, int count, const char* what) {
  if (count < 0) throw Failure(std::string(what) + ": negative count");
  if (count > 0 && texts == nullptr) throw Failure(std::string(what) + " is NULL");
  std::vector<std::string_view> out;
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) out.push_back(text_arg(texts[i], what));
  return out;
}

char* copy_string(std::string_view s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

void free_strings(char** strings, int count) {
  if (strings == nullptr) return;
  for (int i = 0; i < count; ++i) std::free(strings[i]);
  std::free(strings);
}

int word_count(std::string_view text) {
  int words = 0;
  bool in_word = false;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

}  // namespace candle

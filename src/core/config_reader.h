// Typed, strict access to a JSON configuration object (config.json and the
// sentence-transformers module configs). Extra keys are ignored; a key of the
// wrong type is an error naming the file and the key; `null` means "unset".
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace semroute {

class ConfigReader {
 public:
  ConfigReader(nlohmann::json json, std::string source);
  static ConfigReader from_file(const std::filesystem::path& path);

  bool has(const std::string& key) const;  // present and not null

  int64_t get_int(const std::string& key, int64_t fallback) const;
  std::optional<int64_t> get_optional_int(const std::string& key) const;
  double get_double(const std::string& key, double fallback) const;
  std::optional<double> get_optional_double(const std::string& key) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  std::vector<std::string> get_strings(const std::string& key) const;  // empty if unset
  // A nested object (an empty reader if unset).
  ConfigReader get_object(const std::string& key) const;

  const nlohmann::json& json() const { return json_; }
  const std::string& source() const { return source_; }

 private:
  const nlohmann::json* find(const std::string& key) const;
  [[noreturn]] void wrong_type(const std::string& key, const char* expected) const;

  nlohmann::json json_;
  std::string source_;
};

}  // namespace semroute

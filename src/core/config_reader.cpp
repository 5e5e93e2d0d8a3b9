#include "core/config_reader.h"

#include <cmath>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {

ConfigReader::ConfigReader(nlohmann::json json, std::string source)
    : json_(std::move(json)), source_(std::move(source)) {
  if (json_.is_null()) json_ = nlohmann::json::object();
  if (!json_.is_object()) throw LoadError(source_ + ": expected a JSON object");
}

ConfigReader ConfigReader::from_file(const std::filesystem::path& path) {
  return ConfigReader(read_json_file(path), path.string());
}

const nlohmann::json* ConfigReader::find(const std::string& key) const {
  const auto it = json_.find(key);
  if (it == json_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool ConfigReader::has(const std::string& key) const { return find(key) != nullptr; }

void ConfigReader::wrong_type(const std::string& key, const char* expected) const {
  throw LoadError(source_ + ": \"" + key + "\" must be " + expected + ", got " + json_.at(key).dump());
}

std::optional<int64_t> ConfigReader::get_optional_int(const std::string& key) const {
  const auto* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_integer()) return v->get<int64_t>();
  // 768.0 is an integer written by a float-happy tool; 0.5 is not.
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  wrong_type(key, "an integer");
}

int64_t ConfigReader::get_int(const std::string& key, int64_t fallback) const {
  return get_optional_int(key).value_or(fallback);
}

std::optional<double> ConfigReader::get_optional_double(const std::string& key) const {
  const auto* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) wrong_type(key, "a number");
  return v->get<double>();
}

double ConfigReader::get_double(const std::string& key, double fallback) const {
  return get_optional_double(key).value_or(fallback);
}

bool ConfigReader::get_bool(const std::string& key, bool fallback) const {
  const auto* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) wrong_type(key, "true or false");
  return v->get<bool>();
}

std::string ConfigReader::get_string(const std::string& key, const std::string& fallback) const {
  const auto* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) wrong_type(key, "a string");
  return v->get<std::string>();
}

std::vector<std::string> ConfigReader::get_strings(const std::string& key) const {
  const auto* v = find(key);
  if (v == nullptr) return {};
  if (!v->is_array()) wrong_type(key, "a list of strings");
  std::vector<std::string> out;
  for (const auto& item : *v) {
    if (!item.is_string()) wrong_type(key, "a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

ConfigReader ConfigReader::get_object(const std::string& key) const {
  const auto* v = find(key);
  if (v == nullptr) return ConfigReader(nlohmann::json::object(), source_ + " [" + key + "]");
  if (!v->is_object()) wrong_type(key, "an object");
  return ConfigReader(*v, source_ + " [" + key + "]");
}

}  // namespace semroute

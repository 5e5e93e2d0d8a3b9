// YAML files we do not trust (the router's and the unified classifier's
// configs, intent sets): a regular file under the size cap of
// core/file_input.h, parsed, then walked once with aliases followed, so that
// nesting deeper than kMaxNestingDepth, an alias "billion laughs" that
// expands past kMaxYamlNodes, or aliases of long strings that expand past
// kMaxYamlExpandedBytes are refused before any code iterates or copies them.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "semroute/error.h"

namespace semroute {

inline constexpr size_t kMaxYamlNodes = 1'000'000;
inline constexpr size_t kMaxYamlExpandedBytes = size_t{64} << 20;  // scalars' bytes, aliases expanded

// Throws LoadError (kNotFound when the file does not exist).
YAML::Node load_yaml_file(const std::filesystem::path& path);

// Reads one YAML document, naming the field of every problem.
class YamlFields {
 public:
  explicit YamlFields(std::filesystem::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw LoadError(file_.string() + ": " + field + ": " + problem);
  }

  template <class T>
  T scalar(const YAML::Node& node, const std::string& field, const char* expected) const {
    if (!node.IsScalar()) fail(field, std::string("expected ") + expected);
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      fail(field, std::string("expected ") + expected + ", got '" + node.Scalar() + "'");
    }
  }

  // A finite number in [low, high] (NaN, infinities and out-of-range values refused).
  double number(const YAML::Node& node, const std::string& field, double low, double high) const {
    const double value = scalar<double>(node, field, "a number");
    if (!std::isfinite(value) || value < low || value > high)
      fail(field, "must be a finite number in [" + format_bound(low) + ", " + format_bound(high) + "], not '" +
                      node.Scalar() + "'");
    return value;
  }

  std::filesystem::path path(const YAML::Node& node, const std::string& field) const {
    const std::filesystem::path p = scalar<std::string>(node, field, "a path");
    return p.is_absolute() ? p : file_.parent_path() / p;
  }

  std::vector<std::string> strings(const YAML::Node& node, const std::string& field) const {
    if (!node.IsSequence()) fail(field, "expected a list of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < node.size(); ++i)
      out.push_back(scalar<std::string>(node[i], field + "[" + std::to_string(i) + "]", "a string"));
    return out;
  }

  // A map's key: a YAML key may itself be a list or a map ("? [a, b]: x").
  std::string key(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) fail(field.empty() ? "top level" : field, "a key must be a plain string, not a list or a map");
    return node.Scalar();
  }

  void only(const YAML::Node& map, const std::string& field, const std::set<std::string>& known) const {
    for (const auto& item : map) {
      const std::string key = this->key(item.first, field);
      if (known.count(key) == 0) fail(field.empty() ? key : field + "." + key, "unknown field");
    }
  }

 private:
  static std::string format_bound(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }

  std::filesystem::path file_;
};


}  // namespace semroute

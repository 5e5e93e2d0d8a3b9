#include "classifiers/yaml_input.h"

#include <unordered_set>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {
namespace {

// yaml-cpp keeps both entries of a key written twice and answers lookups
// with the first: a second `models:` would be ignored without a word.
void check_unique_keys(const YAML::Node& map, const std::filesystem::path& path) {
  std::unordered_set<std::string> seen;
  for (const auto& item : map) {
    if (!item.first.IsScalar() || seen.insert(item.first.Scalar()).second) continue;
    throw LoadError(path.string() + ":" + std::to_string(item.first.Mark().line + 1) + ": the key '" +
                    item.first.Scalar() + "' appears twice in one map");
  }
}

// Counts the nodes and scalar bytes a full traversal would visit (aliases
// expanded); iterative on an explicit stack, stopping at the first bound crossed.
void check_bounds(const YAML::Node& root, const std::filesystem::path& path) {
  std::vector<std::pair<YAML::Node, int>> stack{{root, 0}};
  size_t visited = 0, bytes = 0;
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (++visited > kMaxYamlNodes)
      throw LoadError(path.string() + ": expands to more than " + std::to_string(kMaxYamlNodes) +
                      " nodes (aliases included)");
    if (depth > kMaxNestingDepth)
      throw LoadError(path.string() + ": nested deeper than " + std::to_string(kMaxNestingDepth) + " levels");
    if (node.IsScalar() && (bytes += node.Scalar().size()) > kMaxYamlExpandedBytes)
      throw LoadError(path.string() + ": its strings expand to more than " +
                      std::to_string(kMaxYamlExpandedBytes >> 20) + " MiB (aliases included)");
    if (node.IsSequence()) {
      for (const auto& child : node) stack.emplace_back(child, depth + 1);
    } else if (node.IsMap()) {
      check_unique_keys(node, path);
      for (const auto& item : node) {
        stack.emplace_back(item.first, depth + 1);
        stack.emplace_back(item.second, depth + 1);
      }
    }
  }
}

}  // namespace

YAML::Node load_yaml_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw LoadError(path.string() + ": not valid YAML (" + e.what() + ")");
  }
  check_bounds(root, path);
  return root;
}

}  // namespace semroute

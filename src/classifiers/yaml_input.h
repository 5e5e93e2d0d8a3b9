// YAML files we do not trust (the unified classifier's config, intent sets):
// a regular file under the size cap of core/file_input.h, parsed, then
// walked once with aliases followed, so that nesting deeper than
// kMaxNestingDepth or an alias "billion laughs" that expands past
// kMaxYamlNodes is refused before any code iterates it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <filesystem>

namespace semroute {

inline constexpr size_t kMaxYamlNodes = 1'000'000;

// Throws LoadError (kNotFound when the file does not exist).
YAML::Node load_yaml_file(const std::filesystem::path& path);

}  // namespace semroute

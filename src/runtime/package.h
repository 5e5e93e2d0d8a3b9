// What identifies a served model: the SHA-256 of every file of its directory
// that a loader may read, and one digest over them (model_sha256: the SHA-256
// of the canonical JSON {"files": {name: sha256}, "format": "task-heads/1"}).
// A directory with a SHA256SUMS manifest ("<hex>  <name>" lines, as
// sha256sum writes them) is checked against it before anything else reads
// it: a file that differs, or one it lists that is missing, fails the load.
#pragma once

#include <filesystem>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace semroute {

struct PackageIdentity {
  std::map<std::string, std::string> files;  // relative path -> SHA-256
  std::string model_sha256;
  std::string manifest_sha256;  // of SHA256SUMS; "" without one
  int64_t parameters = 0;       // values in its weights (model.safetensors, or its shards)
};

// Throws LoadError (kInvalidModel) naming the file that fails the manifest.
PackageIdentity identify_package(const std::filesystem::path& dir);

// A backbone and the heads bound to it, as one model: the backbone's files,
// each head's as "<head>/<file>" (each directory checked against its own
// manifest); parameters: the backbone's.
PackageIdentity identify_bound_heads(const std::filesystem::path& backbone,
                                     const std::vector<std::pair<std::string, std::filesystem::path>>& heads);

}  // namespace semroute

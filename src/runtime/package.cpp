#include "runtime/package.h"

#include <nlohmann/json.hpp>

#include <sstream>

#include "core/checkpoint.h"
#include "core/file_input.h"
#include "core/sha256.h"
#include "semroute/error.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifest = "SHA256SUMS";
constexpr size_t kMaxManifestBytes = size_t{1} << 20;

// Files a loader may read: everything but documentation (*.md), the
// manifest itself, and hidden files; one level of subdirectories
// (sentence-transformers' 1_Pooling/, …).
bool identifies(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] != '.' && p.extension() != ".md" && name != kManifest;
}

void hash_files(const fs::path& dir, const fs::path& prefix, int depth, std::map<std::string, std::string>& out) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!identifies(entry.path())) continue;
    const fs::path relative = prefix / entry.path().filename();
    if (entry.is_regular_file()) {
      out[relative.generic_string()] = sha256_of_file(entry.path());
    } else if (entry.is_directory() && depth > 0) {
      hash_files(entry.path(), relative, depth - 1, out);
    }
  }
}

void check_manifest(const fs::path& dir, const std::string& text, const std::map<std::string, std::string>& files) {
  std::istringstream lines(text);
  std::string line;
  size_t n = 0;
  while (std::getline(lines, line)) {
    ++n;
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    if (space != 64 || line.size() < 67)
      throw LoadError(dir.string() + "/" + kManifest + ":" + std::to_string(n) + ": expected \"<64 hex>  <file>\"",
                      ErrorCode::kInvalidModel);
    const std::string digest = line.substr(0, 64);
    std::string name = line.substr(66);  // "  name" (text) or " *name" (binary)
    const auto it = files.find(name);
    if (it == files.end())
      throw LoadError(dir.string() + ": " + name + ", listed in " + kManifest + ", is missing", ErrorCode::kInvalidModel);
    if (it->second != digest)
      throw LoadError(dir.string() + ": " + name + " has SHA-256 " + it->second + ", its manifest says " + digest,
                      ErrorCode::kInvalidModel);
  }
}

std::string model_digest(const std::map<std::string, std::string>& files) {
  const nlohmann::json canonical = {{"files", files}, {"format", "task-heads/1"}};
  return sha256_hex(canonical.dump());
}

}  // namespace

PackageIdentity identify_package(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw LoadError(dir.string() + ": not a model directory", ErrorCode::kNotFound);
  PackageIdentity id;
  hash_files(dir, "", 1, id.files);
  const fs::path manifest = dir / kManifest;
  if (fs::exists(manifest)) {
    const std::string text = read_file(manifest, kMaxManifestBytes);
    id.manifest_sha256 = sha256_hex(text);
    check_manifest(dir, text, id.files);
  }
  id.model_sha256 = model_digest(id.files);
  const Checkpoint weights = Checkpoint::open(dir);
  for (const std::string& name : weights.names()) id.parameters += weights.find(name)->numel();
  return id;
}

PackageIdentity identify_bound_heads(const fs::path& backbone,
                                     const std::vector<std::pair<std::string, fs::path>>& heads) {
  PackageIdentity id = identify_package(backbone);
  for (const auto& [name, dir] : heads)
    for (const auto& [file, digest] : identify_package(dir).files) id.files[name + "/" + file] = digest;
  id.model_sha256 = model_digest(id.files);
  return id;
}

}  // namespace semroute

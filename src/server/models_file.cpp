#include "server/models_file.h"

#include <cstdlib>
#include <fstream>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void bad(const fs::path& file, const std::string& where, const std::string& why) {
  throw LoadError(file.string() + ": " + where + ": " + why, ErrorCode::kInvalidModel);
}

std::string text_field(const nlohmann::json& entry, const char* key, const fs::path& file, const std::string& where) {
  const auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return "";
  if (!it->is_string()) bad(file, where + "." + key, "expected a string");
  return it->get<std::string>();
}

fs::path default_hub_cache() {
  if (const char* hub = std::getenv("HF_HUB_CACHE"); hub != nullptr && *hub != '\0') return hub;
  if (const char* home = std::getenv("HF_HOME"); home != nullptr && *home != '\0') return fs::path(home) / "hub";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return fs::path(home) / ".cache/huggingface/hub";
  return "";
}

bool is_hex_revision(const std::string& r) {
  return r.size() == 40 && r.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A served name as the serve config's rules take it (the router's
// deployment names are of this kind).
bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
             std::string::npos;
}

ServedModelConfig model_entry(const nlohmann::json& entry, const fs::path& file, const std::string& where,
                              const fs::path& cache, std::string& name) {
  if (!entry.is_object()) bad(file, where, "expected an object");
  for (const auto& [key, value] : entry.items())
    if (key != "model" && key != "name" && key != "revision" && key != "device" && key != "profile" &&
        key != "engine" && key != "family" && key != "memory_budget_gib" && key != "options")
      bad(file, where + "." + key, "unknown field");
  const std::string artifact = text_field(entry, "model", file, where);
  if (artifact.empty()) bad(file, where + ".model", "required (a local directory or a Hub id)");
  name = text_field(entry, "name", file, where);
  if (name.empty()) name = fs::path(artifact).filename().string();
  if (!valid_name(name)) bad(file, where + ".name", "'" + name + "': a name is 1-64 letters, digits, '_', '.' or '-'");
  const std::string revision = text_field(entry, "revision", file, where);
  if (!revision.empty() && !is_hex_revision(revision)) bad(file, where + ".revision", "40 lowercase hex digits");

  ServedModelConfig m;
  std::string device = text_field(entry, "device", file, where);
  if (device.empty() || device == "auto") device = "cpu";
  const std::string profile = text_field(entry, "profile", file, where);
  const std::string family = text_field(entry, "family", file, where);
  try {
    m.options.load = parse_load_options(device, "float32");
  } catch (const Error& e) {
    bad(file, where + ".device", e.what());
  }
  if (!profile.empty() && profile != "exact") m.unavailable = "profile '" + profile + "' is not served (exact only)";
  if (!family.empty() && family != "task_heads")
    m.unavailable = "family '" + family + "' is not served by semroute (task_heads only)";
  if (fs::path(artifact).is_absolute()) {
    m.path = artifact;
    if (!fs::is_directory(m.path)) m.unavailable = artifact + " is not a directory";
  } else {
    std::string why;
    m.path = find_in_hub_cache(cache, artifact, revision, why);
    if (m.path.empty()) m.unavailable = why;
  }
  const nlohmann::json options = entry.value("options", nlohmann::json::object());
  if (!options.is_object()) bad(file, where + ".options", "expected an object");
  for (const auto& [key, value] : options.items()) {
    if (key == "layers") {
      const auto list = value.is_array() ? value : nlohmann::json::array({value});
      for (const auto& l : list) {
        if (!l.is_number_integer() || l.get<int64_t>() < 1) bad(file, where + ".options.layers", "layer numbers");
        m.layers.push_back(l.get<int64_t>());
      }
    } else if (key == "pair_scorer") {
      const auto exit = value.is_array() && value.size() == 1 ? value[0] : value;
      if (!exit.is_object() || !exit.contains("layer") || !exit.contains("dimension") || exit.size() != 2 ||
          !exit["layer"].is_number_integer() || !exit["dimension"].is_number_integer())
        bad(file, where + ".options.pair_scorer", "{layer, dimension}");
      m.pair_scorer = {exit["layer"].get<int64_t>(), exit["dimension"].get<int64_t>()};
      m.rerank = true;
    }  // other options (a decision model's max_scan_tokens, …) belong to families semroute does not serve
  }
  return m;
}

}  // namespace

fs::path find_in_hub_cache(const fs::path& cache, const std::string& repo, const std::string& revision,
                           std::string& why) {
  const size_t slash = repo.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == repo.size() || repo.find('/', slash + 1) != std::string::npos ||
      repo.find("..") != std::string::npos) {
    why = "'" + repo + "' is neither an absolute directory nor a Hub id (org/name)";
    return "";
  }
  const fs::path root = cache / ("models--" + repo.substr(0, slash) + "--" + repo.substr(slash + 1));
  std::string commit = revision;
  if (commit.empty()) {
    std::ifstream ref(root / "refs/main");
    std::getline(ref, commit);
  }
  const fs::path snapshot = root / "snapshots" / commit;
  if (commit.empty() || !is_hex_revision(commit) || !fs::is_directory(snapshot)) {
    why = repo + (revision.empty() ? "" : "@" + revision) + " is not in the Hugging Face cache " + cache.string() +
          " (semroute never downloads: fetch it there, or name a local directory)";
    return "";
  }
  return snapshot;
}

ServeConfig serve_config_from_models_file(const fs::path& file, const fs::path& cache_dir) {
  const nlohmann::json doc = read_json_file(file);
  const auto models = doc.is_object() ? doc.find("models") : doc.end();
  if (models == doc.end() || !models->is_array() || models->empty())
    bad(file, "models", "a non-empty list of {model, name, …}");
  const fs::path cache = cache_dir.empty() ? default_hub_cache() : cache_dir;
  ServeConfig config;
  config.file = file;
  config.listen = "";
  for (size_t i = 0; i < models->size(); ++i) {
    std::string name;
    ServedModelConfig m = model_entry((*models)[i], file, "models[" + std::to_string(i) + "]", cache, name);
    if (!config.models.emplace(name, std::move(m)).second)
      bad(file, "models[" + std::to_string(i) + "].name", "'" + name + "' is served twice");
  }
  return config;
}

}  // namespace semroute

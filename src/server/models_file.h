// The models file the vLLM Semantic Router writes when it starts its model
// runtime itself: `semroute serve --models FILE --uds SOCKET …` reads it in
// place of a serve config (docs/runtime.md). FILE is JSON:
//   {"models": [{"model": "/abs/dir" or "org/name", "name": "served-name",
//                "revision": "<40 hex>"?, "device": "auto"|"cpu"|"cuda[:N]"?,
//                "profile": "exact"?, "engine"?, "family"?, "memory_budget_gib"?,
//                "options": {"layers": [..], "pair_scorer": {layer, dimension}}?}]}
// A Hub id is looked up in the local Hugging Face cache (cache_dir, else
// $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub) at its revision;
// nothing is downloaded: a model found nowhere is served as failed, with
// the reason in /health and its card.
#pragma once

#include <filesystem>
#include <string>

#include "server/serve_config.h"

namespace semroute {

// LoadError naming the entry and field for a malformed file.
ServeConfig serve_config_from_models_file(const std::filesystem::path& file, const std::filesystem::path& cache_dir);

// The snapshot directory of `repo` ("org/name") at `revision` ("" = the
// cache's main ref) under a Hugging Face hub cache, or "" (and `why`).
std::filesystem::path find_in_hub_cache(const std::filesystem::path& cache, const std::string& repo,
                                        const std::string& revision, std::string& why);

}  // namespace semroute

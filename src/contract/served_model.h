// A model served under the model runtime's contract: what the config (a
// serve config's models.NAME, a router's models file, the C API's
// semroute_runtime_add_model) says of it, and what loading made of it: its
// identity, its readiness, and the task heads, embedder or pair scorer it is.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/embeddings.h"
#include "runtime/golden.h"
#include "runtime/decision2.h"
#include "runtime/package.h"
#include "runtime/rerank.h"
#include "runtime/task_heads.h"
#include "runtime/vela2.h"

namespace semroute {

// One model directory served under a name.
struct ServedModelConfig {
  std::filesystem::path path;
  std::optional<TaskKind> kind;  // sequence / token; unset with embedding = false: from config.json
  bool embedding = false;        // task: embedding
  bool rerank = false;           // task: rerank (a pair scorer; also found from matryoshka_config.json)
  TaskOptions options;           // device, dtype, max_length, truncation, overflow
  // Dynamic batching of concurrent requests: by default a batch is what
  // queued while the previous one computed (no added wait); max_batch 1: off.
  BatchingOptions batching{16, 0};
  // An embedding model's exits and Matryoshka widths besides its last layer
  // and full width (ones it was trained for).
  std::vector<int64_t> layers, dimensions;
  PairExit pair_scorer;  // a pair scorer's default exit ({0, 0}: its last layer at full width)
  // Heads bound to the encoder at `path` (a backbone): one task model whose
  // forward serves them all; empty: `path` is a package of its own.
  std::vector<HeadSource> heads;
  // Set when the model cannot be loaded at all (a models file naming one
  // that is not on this machine): it is served as failed, with this reason.
  std::string unavailable;
};

// A model served under a name: a task model (heads), an embedding model, a
// pair scorer (rerank) or a decision model (Vela 2.0).
struct ServedModel {
  std::string name;
  std::filesystem::path path;
  std::shared_ptr<const TaskHeads> heads;
  std::shared_ptr<const EmbeddingModel> embedding;
  std::shared_ptr<const RerankModel> rerank;
  std::shared_ptr<const DecisionModel> decision;
  PackageIdentity identity;
  std::string dtype;  // "fp32", "bf16", "int8"
  std::string device;
  int64_t parameters = 0;
  // "ready", or "failed" (its files differ from its manifest, or its golden
  // answers from their reference): then `reason` says why and requests to it
  // are answered 503 not_ready.
  std::string status = "ready";
  std::string reason;
  GoldenResult golden;
  bool ready() const { return status == "ready"; }
  mutable std::atomic<int64_t> in_flight{0};
};
using ServedModels = std::map<std::string, std::unique_ptr<ServedModel>>;

// Loads a model: identified first (SHA-256 of its files, its manifest
// checked), then read as its files say (pair scorer, sentence-transformers
// embedder, task heads; `config` may name the kind), then its golden check.
// A model whose files differ from its manifest or whose golden answers miss
// is returned failed (not ready, with its reason); LoadError for a directory
// that cannot be read at all.
std::unique_ptr<ServedModel> load_served_model(const std::string& name, const ServedModelConfig& config);

}  // namespace semroute

// The golden check that gates a served model's readiness: fixed requests
// (the runtime contract's golden texts) run twice at load; the answers must
// be identical, finite and, where the package ships reference answers
// (golden_answers.json: {"answers": {"cpu": {key: value}}}), within 1e-3 of
// them. Keys as the contract's runtimes record them: classify
// "<i>.probabilities.<k>", "<i>.scores.<k>", "<i>.span.<n>.<label>.<start>.<end>";
// embeddings "<i>.<k>"; rerank "<i>.logit"; decisions
// "<question>.probabilities.<option>", "<question>.noul".
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "runtime/embeddings.h"
#include "runtime/rerank.h"
#include "runtime/task_heads.h"
#include "runtime/vela2.h"

namespace semroute {

using GoldenValues = std::map<std::string, double>;

struct GoldenResult {
  std::string status = "pending";  // pending, matched, unverified, failed
  size_t checked = 0, matched = 0;
  std::string reference;  // the device class compared with ("cpu"), or ""
  std::string detail;     // why it failed
};

// The package's reference answers for `device_class` ("cpu", "cuda"), or
// nullopt without golden_answers.json (LoadError for a malformed one).
std::optional<GoldenValues> read_golden_answers(const std::filesystem::path& dir, const std::string& device_class);

// Reference answers published for a released model, by its model_sha256, on
// a CPU (Decision 2.0 Kai-0.6B's to its golden request); nullopt for others.
std::optional<GoldenValues> published_golden_answers(const std::string& model_sha256, const std::string& device_class);

// The golden requests of each kind of model, their answers as flat values.
GoldenValues golden_values(const TaskHeads& heads);
GoldenValues golden_values(const EmbeddingModel& model);
GoldenValues golden_values(const RerankModel& model);
// A decision model: the contract's golden state (a request, its source and
// an answer) asked a Choice, a Noul, a Score and a Set question; keys
// "<question>.probabilities.<option>", "<question>.noul".
GoldenValues golden_values(const DecisionModel& model);

// run() twice, then compared with `reference` (CPU tolerance 1e-3, GPU 0.02).
GoldenResult golden_check(const std::function<GoldenValues()>& run, const std::optional<GoldenValues>& reference,
                          const std::string& device_class);

}  // namespace semroute

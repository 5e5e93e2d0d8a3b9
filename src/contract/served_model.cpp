#include "contract/served_model.h"

#include "core/log.h"
#include "semroute/error.h"

namespace semroute {
namespace {

const char* dtype_name(const LoadOptions& load) {
  if (load.int8) return "int8";
  return load.dtype == c10::kBFloat16 ? "bf16" : load.dtype == c10::kHalf ? "fp16" : "fp32";
}

std::unique_ptr<ServedModel> failed_model(std::unique_ptr<ServedModel> m, const std::string& reason) {
  m->status = "failed";
  m->reason = reason;
  m->heads.reset();
  m->embedding.reset();
  m->rerank.reset();
  m->decision.reset();
  log_message(LogLevel::kWarning, "models." + m->name + " is not served: " + reason);
  return m;
}

std::vector<std::pair<std::string, std::filesystem::path>> head_dirs(const std::vector<HeadSource>& heads) {
  std::vector<std::pair<std::string, std::filesystem::path>> out;
  for (const HeadSource& h : heads) out.emplace_back(h.name, h.dir);
  return out;
}

}  // namespace

std::unique_ptr<ServedModel> load_served_model(const std::string& name, const ServedModelConfig& c) {
  auto m = std::make_unique<ServedModel>();
  m->name = name;
  m->path = c.path;
  m->dtype = dtype_name(c.options.load);
  m->device = c.options.load.device.is_cuda() ? "cuda" : "cpu";
  if (!c.unavailable.empty()) return failed_model(std::move(m), c.unavailable);
  try {
    try {
      if (c.heads.empty() && is_decision2_package(c.path)) {  // verified against its own manifest as it loads
        const auto model = Decision2Model::load(c.path, c.options.load);
        m->identity = model->identity();
        m->decision = model;
      } else {
        m->identity = c.heads.empty() ? identify_package(c.path) : identify_bound_heads(c.path, head_dirs(c.heads));
      }
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kInvalidModel) throw;
      return failed_model(std::move(m), e.what());  // its files are not what its manifest says: never read
    }
    m->parameters = m->identity.parameters;
    const bool pair_scorer = c.rerank || (!c.embedding && !c.kind && std::filesystem::exists(c.path / "matryoshka_config.json") &&
                                          std::filesystem::exists(c.path / "classification_heads.safetensors"));
    const bool pooled = !c.kind && !pair_scorer && std::filesystem::exists(c.path / "1_Pooling/config.json") &&
                        std::filesystem::exists(c.path / "modules.json");  // a sentence-transformers package
    if (m->decision) {  // Decision 2.0: loaded above, as its manifest was checked
    } else if (c.heads.empty() && is_vela2_package(c.path)) {
      m->decision = Vela2Model::load(c.path, c.options.load);
    } else if (!c.heads.empty()) {  // the config refuses bound heads beside task embedding or rerank
      m->heads = TaskHeads::load_bound(c.path, c.heads, TaskHeadsOptions{c.options, c.batching});
    } else if (pair_scorer) {
      m->rerank = RerankModel::load(c.path, PairScorerOptions{c.options, c.pair_scorer.layer, c.pair_scorer.dimension},
                                    c.batching);
    } else if (c.embedding || pooled) {
      EmbeddingModelOptions options;
      options.embedder = EmbedderOptions(c.options);
      options.batching = c.batching;
      options.layers = c.layers;
      options.dimensions = c.dimensions;
      m->embedding = EmbeddingModel::load(c.path, options);
    } else {
      m->heads = TaskHeads::load(c.path, c.kind, TaskHeadsOptions{c.options, c.batching});
    }
    // The golden check gates readiness (a reference answer file in the package, else determinism only).
    std::optional<GoldenValues> reference = read_golden_answers(c.path, m->device);
    if (!reference) reference = published_golden_answers(m->identity.model_sha256, m->device);
    m->golden = golden_check([&] {
      return m->heads       ? golden_values(*m->heads)
             : m->embedding ? golden_values(*m->embedding)
             : m->decision  ? golden_values(*m->decision)
                            : golden_values(*m->rerank);
    }, reference, m->device);
    if (m->golden.status == "failed") return failed_model(std::move(m), "golden check: " + m->golden.detail);
  } catch (const Error& e) {
    throw LoadError("models." + name + ": " + e.what(), e.code());
  }
  return m;
}

}  // namespace semroute

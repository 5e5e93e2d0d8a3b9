// `semroute info`: validate a model directory and describe it.
#include <cstdio>
#include <map>

#include "cli.h"
#include "core/device.h"
#include "models/model_factory.h"
#include "semroute/error.h"

namespace semroute::cli {
namespace {

nlohmann::json describe(const ModelSource& source, const Args& args) {
  const ModelConfig config = ModelConfig::parse(source.config);
  const Backend* backend = find_backend(source.config);

  std::map<std::string, int64_t> dtypes;
  int64_t parameters = 0;
  for (const auto& name : source.checkpoint.names()) {
    const TensorInfo& info = *source.checkpoint.find(name);
    source.checkpoint.tensor(name);  // every tensor must be loadable, not just listed
    ++dtypes[dtype_name(info.dtype)];
    parameters += info.numel();
  }
  nlohmann::json out = {
      {"path", source.dir.string()},
      {"model_type", config.model_type},
      {"architecture", config.architecture()},
      {"backend", backend ? nlohmann::json(backend->name) : nlohmann::json(nullptr)},
      {"hidden_size", config.hidden_size},
      {"num_hidden_layers", config.num_hidden_layers},
      {"num_attention_heads", config.num_attention_heads},
      {"intermediate_size", config.intermediate_size},
      {"vocab_size", config.vocab_size},
      {"max_position_embeddings", config.max_position_embeddings},
      {"labels", config.id2label},
      {"weights",
       {{"files", source.checkpoint.files()},
        {"tensors", source.checkpoint.size()},
        {"parameters", parameters},
        {"dtypes", dtypes}}},
  };
  if (backend != nullptr) {
    // Building the backend checks the complete expected tensor set and shapes.
    std::vector<std::string> unused;
    const auto model = load_core_model(source, load_options(args), &unused);
    out["dtype"] = model->precision_name();
    out["max_length"] = model->max_length();
    out["tensors_outside_encoder"] = unused;
  }
  return out;
}

void print_text(const nlohmann::json& d) {
  std::printf("path:          %s\n", d["path"].get<std::string>().c_str());
  std::printf("architecture:  %s (model_type %s)\n", d["architecture"].get<std::string>().c_str(),
              d["model_type"].get<std::string>().c_str());
  std::printf("backend:       %s\n",
              d["backend"].is_null() ? "none (unsupported model type)" : d["backend"].get<std::string>().c_str());
  std::printf("sizes:         hidden %lld, layers %lld, heads %lld, intermediate %lld, vocab %lld, positions %lld\n",
              d["hidden_size"].get<long long>(), d["num_hidden_layers"].get<long long>(),
              d["num_attention_heads"].get<long long>(), d["intermediate_size"].get<long long>(),
              d["vocab_size"].get<long long>(), d["max_position_embeddings"].get<long long>());
  std::string labels;
  for (const auto& l : d["labels"]) labels += (labels.empty() ? "" : ", ") + l.get<std::string>();
  std::printf("labels:        %zu (%s)\n", d["labels"].size(), labels.c_str());
  const auto& w = d["weights"];
  std::string dtypes;
  for (const auto& [k, v] : w["dtypes"].items()) dtypes += (dtypes.empty() ? "" : ", ") + k + " x" + v.dump();
  std::printf("weights:       %lld tensors, %lld parameters (%s) in %zu file(s)\n", w["tensors"].get<long long>(),
              w["parameters"].get<long long>(), dtypes.c_str(), w["files"].size());
  if (d.contains("dtype"))
    std::printf("loaded as:     %s, max length %lld\n", d["dtype"].get<std::string>().c_str(),
                d["max_length"].get<long long>());
  if (d.contains("tensors_outside_encoder") && !d["tensors_outside_encoder"].empty()) {
    std::string names;
    for (const auto& n : d["tensors_outside_encoder"]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    std::printf("not encoder:   %s\n", names.c_str());
  }
  std::printf("status:        ok\n");
}

}  // namespace

int run_info(const Args& args) {
  if (args.positional.size() != 1) throw InvalidInput("usage: semroute info MODEL_DIR [--json]");
  const nlohmann::json d = describe(open_model_source(args.positional[0]), args);
  if (args.json) {
    std::printf("%s\n", d.dump(2).c_str());
  } else {
    print_text(d);
  }
  return 0;
}

}  // namespace semroute::cli

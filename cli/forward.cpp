// `semroute forward`: run a model directory on given token ids and print every
// output it can produce, under the names the reference fixtures use.
#include <ATen/ops/from_blob.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/softmax.h>
#include <c10/core/InferenceMode.h>

#include <cstdio>
#include <map>

#include "adapters/lora_adapter.h"
#include "cli.h"
#include "core/file_input.h"
#include "models/model_factory.h"
#include "semroute/error.h"
#include "tasks/embedder.h"
#include "tasks/pooling.h"
#include "tasks/task_head.h"
#include "tasks/task_model.h"

namespace semroute::cli {
namespace {

// A [batch, seq] int64 tensor from a rectangular JSON array of integers.
at::Tensor id_matrix(const nlohmann::json& rows, const std::string& what) {
  if (!rows.is_array() || rows.empty() || !rows[0].is_array())
    throw InvalidInput(what + " must be a non-empty list of lists of integers");
  const size_t width = rows[0].size();
  std::vector<int64_t> flat;
  for (const auto& row : rows) {
    if (!row.is_array() || row.size() != width) throw InvalidInput(what + " rows must all have the same length");
    for (const auto& v : row) {
      if (!v.is_number_integer()) throw InvalidInput(what + " must hold integers");
      flat.push_back(v.get<int64_t>());
    }
  }
  return at::from_blob(flat.data(), {static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)}, c10::kLong)
      .clone();
}

ModelInputs case_inputs(const nlohmann::json& c, c10::Device device) {
  ModelInputs in;
  in.input_ids = id_matrix(c.at("input_ids"), "input_ids").to(device);
  in.attention_mask = c.contains("attention_mask") ? id_matrix(c["attention_mask"], "attention_mask").to(device)
                                                   : at::ones_like(in.input_ids);
  if (c.contains("token_type_ids")) in.token_type_ids = id_matrix(c["token_type_ids"], "token_type_ids").to(device);
  return in;
}

// Every output the model directory can produce, under the fixtures' names:
// hidden states and pooled vectors, the task head's logits, or the embedding
// pipeline's steps with Matryoshka truncations.
std::map<std::string, at::Tensor> outputs(const CoreModel& model, const std::optional<TaskHead>& head,
                                          const Embedder* embedder, const ModelInputs& in) {
  const at::Tensor hidden = model.forward(in);
  std::map<std::string, at::Tensor> out = {
      {"last_hidden_state", hidden},
      {"cls_pooled", cls_pool(hidden)},
      {"mean_pooled", mean_pool(hidden, in.attention_mask)},
  };
  if (head && head->kind() == TaskKind::kSequence) {
    out["logits"] = head->sequence_logits(hidden, in.attention_mask);
    out["probs"] = at::softmax(out["logits"].to(at::kFloat), -1);
  } else if (head) {
    out["logits"] = head->token_logits(hidden);
    out["argmax"] = out["logits"].argmax(-1);
  } else if (embedder != nullptr) {
    for (auto& [name, tensor] : embedder->embed_steps(in, embedder->defaults())) out[name] = tensor;
    const at::Tensor embedding = out["embedding"];
    for (int64_t dim : {768, 512, 256, 128, 64, 32, 16})
      if (dim < embedding.size(1)) out["matryoshka_renormalized" + std::to_string(dim)] = matryoshka(embedding, dim, true);
  }
  return out;
}

}  // namespace

int run_forward(const Args& args) {
  if (args.positional.size() != 2)
    throw InvalidInput("usage: semroute forward MODEL_DIR CASES.json [--adapter DIR] [--json]");
  const nlohmann::json file = read_json_file(args.positional[1], kMaxTokenizerFileBytes);
  nlohmann::json cases;
  try {
    cases = file.at("cases");
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(args.positional[1] + ": expected {\"cases\": [...]} (" + e.what() + ")");
  }

  const ModelSource source = open_model_source(args.positional[0]);
  // An adapter is merged; its saved head (if any) replaces the model's.
  const auto adapter =
      args.adapter.empty() ? nullptr : load_adapter_for(args.adapter, source.checkpoint, load_options(args), true);
  const auto patch = merge_patch(adapter);
  const auto model = load_core_model(source, load_options(args), nullptr, patch);
  std::optional<TaskHead> head;
  std::shared_ptr<const Embedder> embedder;
  std::optional<TaskKind> kind = task_kind_of(model->config().architecture());
  if (adapter && adapter->task().task_type == "SEQ_CLS") kind = TaskKind::kSequence;
  if (adapter && adapter->task().task_type == "TOKEN_CLS") kind = TaskKind::kToken;
  if (kind) {
    head = load_task_head(*model, *kind, source, adapter.get(), patch);
  } else {
    EmbedderOptions options;
    options.load = load_options(args);
    options.require_tokenizer = false;
    options.adapter = args.adapter;
    embedder = Embedder::load(args.positional[0], options);
  }
  c10::InferenceMode guard;
  nlohmann::json out = {{"cases", nlohmann::json::array()}};
  for (const auto& c : cases) {
    const ModelInputs in = case_inputs(c, model->device());
    nlohmann::json outputs_json = nlohmann::json::object();
    for (const auto& [name, tensor] : outputs(*model, head, embedder.get(), in)) outputs_json[name] = tensor_json(tensor);
    out["cases"].push_back({{"name", c.value("name", "")}, {"outputs", outputs_json}});
  }
  if (args.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    for (const auto& c : out["cases"]) {
      std::printf("%s\n", c["name"].get<std::string>().c_str());
      for (const auto& [name, t] : c["outputs"].items())
        std::printf("  %-20s shape %s  first %s\n", name.c_str(), t["shape"].dump().c_str(),
                    t["data"].empty() ? "-" : t["data"][0].dump().c_str());
    }
  }
  return 0;
}

}  // namespace semroute::cli

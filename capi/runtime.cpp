// The model runtime contract in process: the contract layer's surfaces over
// the models a caller adds, JSON in and out (src/contract/).

#include "contract/contract.h"
#include "handles.h"
#include "semroute/error.h"

using namespace semroute::capi;

struct semroute_runtime {
  semroute::ServedModels models;
  semroute::ContractLimits limits;
  mutable semroute::ResultCache results{16384};  // thread-safe
};

struct semroute_runtime_reply {
  semroute::ContractReply reply;
  std::string server_timing;
};

namespace {

// A request body: the HTTP layer's limit, so an in-process call is bounded alike.
constexpr size_t kMaxRequestBytes = size_t{64} << 20;

semroute::ServedModelConfig model_config(const std::string& path, const semroute_model_params& p) {
  semroute::ServedModelConfig c;
  c.path = path;
  c.options = task_options_of(p);
  c.batching = semroute::BatchingOptions{p.max_batch, p.max_wait_us};
  switch (p.task) {
    case SEMROUTE_TASK_SEQUENCE_CLASSIFICATION: c.kind = semroute::TaskKind::kSequence; break;
    case SEMROUTE_TASK_TOKEN_CLASSIFICATION: c.kind = semroute::TaskKind::kToken; break;
    case SEMROUTE_TASK_EMBEDDING: c.embedding = true; break;
    case SEMROUTE_TASK_PAIR_SCORING: c.rerank = true; break;
    case SEMROUTE_TASK_AUTO: break;
    default: throw semroute::InvalidInput("params.task: the runtime serves task models, embedders and pair scorers");
  }
  if (c.rerank) c.pair_scorer = {p.layer, p.dimension};
  return c;
}

void check_name(const semroute_runtime* runtime, const std::string& name) {
  const bool valid = !name.empty() && name.size() <= 64 &&
                     name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
                         std::string::npos;
  if (!valid) throw semroute::InvalidInput("name '" + name + "': 1-64 of [A-Za-z0-9_.-]");
  if (runtime->models.count(name) != 0) throw semroute::InvalidInput("name '" + name + "' is taken");
}


}  // namespace

extern "C" {

semroute_status* semroute_runtime_create(uint32_t max_bundle_tasks, uint32_t max_queue, semroute_runtime** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(out, "out_runtime");
    auto runtime = std::make_unique<semroute_runtime>();
    runtime->limits.max_bundle_tasks = max_bundle_tasks > 0 ? max_bundle_tasks : 64;
    runtime->limits.max_queue = max_queue > 0 ? max_queue : 64;
    runtime->limits.max_request_bytes = kMaxRequestBytes;
    *out = runtime.release();
  });
}

semroute_status* semroute_runtime_add_model(semroute_runtime* runtime, const char* name, const char* path,
                                            const semroute_model_params* params) {
  return guarded_load([&] {
    require(runtime, "runtime");
    require(name, "name");
    require(path, "path");
    check_name(runtime, name);
    const semroute_model_params p = effective_params(params);
    runtime->models.emplace(name, semroute::load_served_model(name, model_config(path, p)));
  });
}

semroute_status* semroute_runtime_add_heads(semroute_runtime* runtime, const char* name, const char* backbone_path,
                                            size_t count, const char* const* head_names, const char* const* head_paths,
                                            const semroute_model_params* params) {
  return guarded_load([&] {
    require(runtime, "runtime");
    require(name, "name");
    require(backbone_path, "backbone_path");
    require(head_names, "head_names");
    require(head_paths, "head_paths");
    if (count == 0 || count > semroute::kMaxBoundHeads)
      throw semroute::InvalidInput("count: 1-" + std::to_string(semroute::kMaxBoundHeads) + " heads");
    check_name(runtime, name);
    semroute_model_params p = effective_params(params);
    p.task = SEMROUTE_TASK_AUTO;
    semroute::ServedModelConfig c = model_config(backbone_path, p);
    for (size_t i = 0; i < count; ++i) {
      require(head_names[i], "head_names[i]");
      require(head_paths[i], "head_paths[i]");
      c.heads.push_back(semroute::HeadSource{head_names[i], head_paths[i], std::nullopt});
    }
    runtime->models.emplace(name, semroute::load_served_model(name, c));
  });
}

semroute_status* semroute_runtime_call(const semroute_runtime* runtime, const char* method, const char* path,
                                       const char* body, size_t body_len, semroute_runtime_reply** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(runtime, "runtime");
    require(method, "method");
    require(path, "path");
    require(out, "out_reply");
    if (body == nullptr && body_len > 0) throw semroute::InvalidInput("body: NULL with a length");
    auto reply = std::make_unique<semroute_runtime_reply>();
    if (body_len > runtime->limits.max_request_bytes) {
      reply->reply.status = 413;
      reply->reply.body = R"({"error":{"code":"request_too_large","message":"the body is larger than 64 MiB"}})";
    } else {
      auto answer = semroute::contract_reply(method, path, std::string_view(body == nullptr ? "" : body, body_len),
                                             runtime->models, runtime->limits, semroute::RequestControl(),
                                             &runtime->results);
      if (answer) {
        reply->reply = std::move(*answer);
      } else {
        reply->reply.status = 404;
        reply->reply.body = R"({"error":{"code":"invalid_request","message":"no route )" + std::string(path) + "\"}}";
      }
    }
    for (const auto& [header, value] : reply->reply.headers)
      if (header == "Server-Timing") reply->server_timing = value;
    *out = reply.release();
  });
}

int semroute_runtime_reply_status(const semroute_runtime_reply* reply) { return reply != nullptr ? reply->reply.status : 0; }

const char* semroute_runtime_reply_body(const semroute_runtime_reply* reply, size_t* length) {
  if (length != nullptr) *length = reply != nullptr ? reply->reply.body.size() : 0;
  return reply != nullptr ? reply->reply.body.c_str() : "";
}

const char* semroute_runtime_reply_server_timing(const semroute_runtime_reply* reply) {
  return reply != nullptr ? reply->server_timing.c_str() : "";
}

void semroute_runtime_reply_free(semroute_runtime_reply* reply) { delete reply; }

void semroute_runtime_free(semroute_runtime* runtime) { delete runtime; }

}  // extern "C"

// The configuration of `semroute serve`: where it listens, its limits, and
// what it loads, each under a name requests use ("model": "domain"). Read
// through the bounded YAML reader (classifiers/yaml_input.h); paths are
// relative to the file. Nothing a request sends is ever read as a path.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compression/prompt_compressor.h"
#include "contract/served_model.h"
#include "hallucination/hallucination_detector.h"
#include "tasks/batcher.h"
#include "tasks/pair_scorer.h"
#include "tasks/task_model.h"

namespace semroute {

// A hallucination detector served under a name (/v1/check-answer): a token
// classifier directory, an optional NLI model, and how it judges.
struct ServedDetectorConfig {
  std::filesystem::path path;
  std::filesystem::path nli;     // "" = none
  DetectorOptions options;       // template, threshold, windows
  PipelineOptions pipeline;      // device, dtype, max_length, tokenizer
};

struct ServeLimits {
  size_t max_body_bytes = size_t{1} << 20;  // refused (413) before the body is read
  size_t max_queue = 64;                    // requests in flight per model (router, detector …): 429 beyond
  size_t max_connections = 1024;            // open at once; more are closed on accept
  int64_t header_timeout_ms = 5'000;        // a request's headers (or the next, on a kept-alive connection) must
                                            // all arrive within it from its first byte's wait: else closed
  int64_t body_timeout_ms = 30'000;         // its body must arrive within it after its headers: else closed
  int64_t request_timeout_ms = 0;           // a request not done this long after its headers: 504 (0: none)
  size_t max_streams = 256;                 // /v1/check-answer streams open at once: 429 beyond
  size_t max_stream_bytes = size_t{256} << 20;  // what open streams hold (pinned contexts): 429 beyond
  int64_t stream_idle_ms = 60'000;          // a stream not fed this long (a feed counts until it ends) is dropped
  size_t max_check_windows = 1024;          // context windows one answer-check request may read in all
                                            // (sentences x windows each reads): 413 beyond
  size_t max_bundle_tasks = 64;             // tasks one POST /v1/bundle may carry: 413 beyond
  size_t result_cache_entries = 16384;      // item answers the contract's surfaces keep (0: none)
};

struct ServeConfig {
  std::filesystem::path file;     // the YAML this came from (reloads read it again)
  std::string listen;             // "127.0.0.1:8080"; "" = no TCP
  std::filesystem::path unix_socket;
  unsigned socket_mode = 0600;    // permissions of the Unix socket
  std::string auth_token_env;     // a bearer token from this environment variable; "" = none
  ServeLimits limits;
  std::map<std::string, ServedModelConfig> models;
  // Unified classifier YAMLs: the multi-task engine's adapters sharing one
  // encoder pass, fine-tuned models, or both.
  std::map<std::string, std::filesystem::path> unified;
  std::map<std::string, std::filesystem::path> routers;  // router YAMLs (reloaded on SIGHUP)
  // Prompt compressors ({max_tokens, tokenizer, …} as a router's `compression:`).
  std::map<std::string, std::shared_ptr<const PromptCompressor>> compressors;
  std::map<std::string, ServedDetectorConfig> detectors;

  // Throws LoadError naming the field of the first problem.
  static ServeConfig from_yaml(const std::filesystem::path& file);
};

}  // namespace semroute

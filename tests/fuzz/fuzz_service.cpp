// Fuzz target: what `semroute serve` answers, below HTTP (server/service.h),
// on the default models: classify, tokens, embeddings, similarity, unified,
// route, compress, check-answer, the runtime contract's surfaces, and answer
// streams fed chunk by chunk. The input's first line is "METHOD PATH
// [METADATA]" (the rest is the body; METADATA what x-semroute-metadata
// carried) or "STREAM FORMAT" (a stream of that format is opened on a
// detector and fed the rest, cut at each 0x1e byte, then closed). Every
// answer must be a status from 200 to 599 whose JSON body parses, and an
// error answer must carry {"error": {"code": …}}; a crash, a sanitizer report
// or an exception out of handle() (it is noexcept) is a finding.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "models/random_model.h"
#include "runtime/random_vela2.h"
#include "server/serve_config.h"
#include "server/service.h"

namespace {

namespace fs = std::filesystem;

// The unit tests' service (tests/unit/serve_test.cpp), and tiny random
// models written for the surfaces the default models lack: a hallucination
// detector (a token classifier), a Vela 2.0 package (decisions) and a pair
// scorer (rerank).
std::unique_ptr<semroute::Service> make_service() {
  const fs::path dir = fs::temp_directory_path() / ("semroute-fuzz-service-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  semroute::RandomModelSpec detector;
  detector.labels = {"SUPPORTED", "HALLUCINATED"};
  detector.token_task = true;
  detector.tokenizer = SEMROUTE_TEST_DATA "/tokenizers/modernbert/tokenizer.json";
  semroute::write_random_modernbert(detector, dir / "detector");
  semroute::RandomModelSpec tiny;
  tiny.tokenizer = detector.tokenizer;
  semroute::write_random_vela2(tiny, "both", 512, dir / "vela");
  semroute::write_random_pair_scorer(tiny, dir / "scorer");
  const std::string m = SEMROUTE_REPO_DIR "/models";
  std::ofstream(dir / "serve.yaml")
      << "limits: {max_check_windows: 64}\n"
         "models:\n"
         "  domain: " << m << "/domain\n"
         "  pii: " << m << "/pii\n"
         "  encoder: {path: " << m << "/multitask/base, task: embedding, dimensions: [16]}\n"
         "  vela: " << (dir / "vela").string() << "\n"
         "  scorer: " << (dir / "scorer").string() << "\n"
         "unified:\n  default: " << m << "/router.yaml\n"
         "routers:\n  default: " SEMROUTE_REPO_DIR "/examples/router/router.yaml\n"
         "compressors:\n  short: {max_tokens: 20, tokenizer: " << m << "/domain}\n"
         "detectors:\n  d: " << (dir / "detector").string() << "\n";
  auto service = std::make_unique<semroute::Service>(semroute::ServeConfig::from_yaml(dir / "serve.yaml"));
  fs::remove_all(dir);  // everything is loaded
  return service;
}

// An answer as the contract and docs/serve.md promise it.
void check(const semroute::Reply& reply) {
  if (reply.status < 200 || reply.status > 599) std::abort();
  if (reply.content_type != "application/json") return;  // /metrics, event streams
  const auto body = nlohmann::json::parse(reply.body, nullptr, false);
  if (body.is_discarded()) std::abort();
  if (reply.status >= 400 && !(body.contains("error") && body["error"].contains("code"))) std::abort();
}

// Opens a stream of `format` on the detector, feeds it `chunks` (0x1e apart)
// and closes it.
void feed_stream(const semroute::Service& service, std::string_view format, std::string_view chunks) {
  const nlohmann::json open = {{"detector", "d"}, {"context", "The bridge was built in 1890."},
                               {"question", "When was the bridge built?"}, {"format", format}};
  const semroute::Reply opened = service.handle("POST", "/v1/check-answer/streams",
                                                   open.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  check(opened);
  if (opened.status != 201) return;
  const std::string path = "/v1/check-answer/streams/" + nlohmann::json::parse(opened.body)["stream"].get<std::string>();
  for (size_t begin = 0; begin <= chunks.size();) {
    const size_t end = std::min(chunks.find('\x1e', begin), chunks.size());
    check(service.handle("POST", path, chunks.substr(begin, end - begin)));
    begin = end + 1;
  }
  check(service.handle("DELETE", path, ""));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  semroute::fuzz::signal_handlers_on_own_stack();
  static const std::unique_ptr<semroute::Service> service = make_service();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t line_end = std::min(input.find('\n'), input.size());
  const std::string_view line = input.substr(0, line_end);
  const std::string_view rest = input.substr(std::min(line_end + 1, input.size()));
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return 0;
  const std::string_view first = line.substr(0, space);
  std::string_view second = line.substr(space + 1);
  if (first == "STREAM") {
    feed_stream(*service, second, rest);
    return 0;
  }
  semroute::RequestInfo info;  // "METHOD PATH METADATA": x-semroute-metadata's value
  if (const size_t meta = second.find(' '); meta != std::string_view::npos) {
    info.metadata_json = second.substr(meta + 1);
    second = second.substr(0, meta);
  }
  check(service->handle(first, second, rest, info));
  return 0;
}

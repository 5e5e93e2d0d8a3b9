// `semroute serve` without sockets: the service answers what the in-process
// classes answer (same models, 1e-6), its errors carry the stable codes and
// HTTP statuses, its queue is bounded, and router configs reload.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <future>
#include <thread>

#include "classifiers/unified_classifier.h"
#include "hallucination/answer_stream.h"
#include "router/router.h"
#include "tokenizers/tokenizer.h"
#include "server/service.h"
#include "tasks/batcher.h"
#include "tasks/embedder.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

const std::filesystem::path kModels = test::repo_dir() / "models";

std::string serve_yaml() {
  const std::string m = kModels.string();
  return "models:\n"
         "  domain: " + m + "/domain\n"
         "  batched: {path: " + m + "/domain, max_batch: 8, max_wait_us: 2000}\n"
         "  pii: " + m + "/pii\n"
         "  encoder: {path: " + m + "/multitask/base, task: embedding, dimensions: [16]}\n"
         "unified:\n  default: " + m + "/router.yaml\n"
         "routers:\n  default: " + (test::repo_dir() / "examples/router/router.yaml").string() + "\n"
         "compressors:\n  short: {max_tokens: 20, tokenizer: " + m + "/domain}\n";
}

class Serve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    test::write_file(*dir_ / "serve.yaml", serve_yaml());
    service_ = new Service(ServeConfig::from_yaml(*dir_ / "serve.yaml"));
  }
  static void TearDownTestSuite() {
    delete service_;
    delete dir_;
  }
  static nlohmann::json post(const std::string& path, const nlohmann::json& body, int expected = 200) {
    const Reply r = service_->handle("POST", path, body.dump());
    EXPECT_EQ(r.status, expected) << path << ": " << r.body;
    return nlohmann::json::parse(r.body);
  }
  static test::TempDir* dir_;
  static Service* service_;
};
test::TempDir* Serve::dir_ = nullptr;
Service* Serve::service_ = nullptr;

const std::vector<std::string> kTexts = {"What is the derivative of x^2 + 3x?", "Call me at 212-555-0187, David Kim.",
                                         "Ünïcödé — 日本語のテキスト", ""};

TEST_F(Serve, ClassifyEqualsTheClassifier) {
  const auto classifier = SequenceClassifier::load(kModels / "domain");
  const std::vector<std::string_view> views(kTexts.begin(), kTexts.end());
  const auto want = classifier->classify(views);
  for (const char* model : {"domain", "batched"}) {
    const auto got = post("/v1/classify", {{"model", model}, {"input", kTexts}})["results"];
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i]["label"], want[i].label);
      for (size_t k = 0; k < classifier->labels().size(); ++k)  // the runtime contract: in label order
        EXPECT_NEAR(got[i]["probabilities"][k].get<double>(), want[i].probabilities[k], 1e-6);
    }
  }
  const auto one = post("/v1/classify", {{"model", "domain"}, {"input", kTexts[0]}})["results"];
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]["label"], want[0].label);
}

TEST_F(Serve, TokensAndEmbeddingsEqualTheirClasses) {
  const auto pii = TokenClassifier::load(kModels / "pii");
  const auto want = pii->classify({kTexts[1]});
  const auto got = post("/v1/tokens", {{"model", "pii"}, {"input", {kTexts[1]}}})["results"][0]["entities"];
  ASSERT_EQ(got.size(), want[0].entities.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i]["type"], want[0].entities[i].type);
    EXPECT_EQ(got[i]["begin"], want[0].entities[i].begin);
    EXPECT_NEAR(got[i]["score"].get<double>(), want[0].entities[i].score, 1e-6);
  }
  const auto embedder = Embedder::load(kModels / "multitask/base");
  const std::vector<float> rows = embedder->embed_rows({"solve for x", "court ruling"});
  const auto reply = post("/v1/embeddings", {{"model", "encoder"}, {"input", {"solve for x", "court ruling"}}});
  EXPECT_EQ(reply["object"], "list");
  ASSERT_EQ(reply["data"].size(), 2u);
  const size_t dim = rows.size() / 2;
  for (size_t r = 0; r < 2; ++r) {
    const auto& e = reply["data"][r];
    EXPECT_EQ(e["index"], r);
    ASSERT_EQ(e["embedding"].size(), dim);
    for (size_t k = 0; k < dim; ++k) EXPECT_NEAR(e["embedding"][k].get<double>(), rows[r * dim + k], 1e-6);
  }
  EXPECT_GT(reply["usage"]["prompt_tokens"].get<int>(), 0);
  const auto short_ones = post("/v1/embeddings", {{"model", "encoder"}, {"input", "x"}, {"dimensions", 16}});
  EXPECT_EQ(short_ones["data"][0]["embedding"].size(), 16u);
  const double cosine = post("/v1/similarity", {{"model", "encoder"}, {"a", "solve for x"}, {"b", "solve for x"}})["similarity"];
  EXPECT_NEAR(cosine, 1.0, 1e-5);
}

TEST_F(Serve, UnifiedAndRouteEqualTheirClasses) {
  const auto unified = UnifiedClassifier::load(UnifiedConfig::from_yaml(kModels / "router.yaml"));
  const auto want = unified->classify({kTexts[1]})[0].answers;
  const auto got = post("/v1/unified", {{"model", "default"}, {"input", kTexts[1]}})["results"][0]["tasks"];
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i]["task"], want[i].task);
    if (want[i].kind == TaskKind::kSequence) {
      EXPECT_NEAR(got[i]["confidence"].get<double>(), want[i].classification.confidence, 1e-6);
    }
  }
  const nlohmann::json request = {{"model", "auto"},
                                  {"messages", {{{"role", "user"}, {"content", "What is the integral of sin(x) from 0 to pi?"}}}}};
  const auto router = Router::load(test::repo_dir() / "examples/router/router.yaml");
  const RouteResult expected = router->route_json(request.dump());
  const Reply reply = service_->handle("POST", "/v1/route", request.dump());
  ASSERT_EQ(reply.status, 200) << reply.body;
  const auto route = nlohmann::json::parse(reply.body);
  EXPECT_EQ(route["decision"], expected.decision);
  EXPECT_EQ(route["request"], nlohmann::json::parse(expected.request.dump()));
  bool decision_header = false;
  for (const auto& [name, value] : reply.headers) decision_header |= name == "x-semroute-decision" && value == expected.decision;
  EXPECT_TRUE(decision_header);
  // The cache: the answer stored through the route id answers the next request.
  ASSERT_TRUE(route.contains("route_id")) << route.dump();
  const nlohmann::json answer = {{"id", "cached-1"}, {"object", "chat.completion"}, {"choices", nlohmann::json::array()}};
  EXPECT_TRUE(post("/v1/route/answer", {{"route_id", route["route_id"]}, {"response", answer}})["stored"]);
  const auto again = nlohmann::json::parse(service_->handle("POST", "/v1/route?router=default", request.dump()).body);
  EXPECT_EQ(again["cache"], "hit");
  post("/v1/route/answer", {{"route_id", route["route_id"]}, {"response", answer}}, 404);  // used once
}

TEST_F(Serve, CompressEqualsTheCompressor) {
  std::string text = "Please read the report. ";
  for (int i = 0; i < 60; ++i) text += "Nothing new happened in week " + std::to_string(i % 9) + ". ";
  text += "The Lisbon office closed. What changed?";
  CompressOptions options;
  options.max_tokens = 20;
  const PromptCompressor compressor(options, load_tokenizer(kModels / "domain"));
  const CompressedText want = compressor.compress(text);
  const auto got = post("/v1/compress", {{"model", "short"}, {"input", text}});
  EXPECT_EQ(got["text"], want.text);
  EXPECT_EQ(got["tokens"], want.tokens);
  EXPECT_TRUE(got["compressed"]);
  EXPECT_EQ(got["ranges"].size(), want.kept.size());
  post("/v1/compress", {{"model", "nope"}, {"input", "x"}}, 404);
}

TEST_F(Serve, ErrorsCarryTheStableCodes) {
  const auto code = [](const Reply& r) { return nlohmann::json::parse(r.body)["error"]["code"].get<std::string>(); };
  // The runtime contract's paths answer its codes; semroute's own paths keep theirs.
  Reply r = service_->handle("POST", "/v1/classify", R"({"model": "nope", "input": "x"})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(code(r), "model_not_found");
  r = service_->handle("POST", "/v1/classify", "{not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(code(r), "invalid_request");
  r = service_->handle("POST", "/v1/classify", "{\"model\": \"domain\", \"input\": \"bad \xff\"}");
  EXPECT_EQ(r.status, 400);  // invalid UTF-8 inside JSON is a JSON error
  r = service_->handle("POST", "/v1/classify", R"({"model": "domain", "input": "bad \udc00"})");
  EXPECT_EQ(r.status, 400);
  r = service_->handle("POST", "/v1/classify", R"({"model": "domain", "input": 5})");
  EXPECT_EQ(code(r), "invalid_request");
  r = service_->handle("POST", "/v1/tokens", R"({"model": "domain", "input": "x"})");
  EXPECT_EQ(code(r), "invalid_argument");  // not a token model
  r = service_->handle("POST", "/v1/classify", "[1, 2]");
  EXPECT_EQ(r.status, 400);
  r = service_->handle("DELETE", "/v1/classify", "");
  EXPECT_EQ(r.status, 405);
  r = service_->handle("GET", "/v1/nowhere", "");
  EXPECT_EQ(r.status, 404);
  r = service_->handle("POST", "/v1/route", R"({"messages": "not a list"})");
  EXPECT_EQ(r.status, 400);
  r = service_->handle("POST", "/v1/route?router=other", R"({"messages": []})");
  EXPECT_EQ(code(r), "not_found");
  nlohmann::json many = nlohmann::json::array();
  for (int i = 0; i < 2049; ++i) many.push_back("x");
  r = service_->handle("POST", "/v1/classify", nlohmann::json({{"model", "domain"}, {"input", many}}).dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(code(r), "invalid_request");
}

TEST_F(Serve, HealthReadyAndMetrics) {
  EXPECT_EQ(service_->handle("GET", "/health", "").status, 200);
  const auto ready = nlohmann::json::parse(service_->handle("GET", "/ready", "").body);
  EXPECT_TRUE(ready["ready"]);
  EXPECT_EQ(ready["models"].size(), 4u);
  service_->handle("POST", "/v1/classify", R"({"model": "domain", "input": "x"})");
  const Reply metrics = service_->handle("GET", "/metrics", "");
  EXPECT_NE(metrics.body.find("semroute_requests_total{endpoint=\"/v1/classify\",status=\"200\"}"), std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("semroute_request_seconds_bucket{endpoint=\"/v1/classify\",le=\"+Inf\"}"), std::string::npos);
  EXPECT_NE(metrics.body.find("semroute_in_flight{model=\"domain\"} 0"), std::string::npos);
}

// A request that holds its slot until the test lets it go: its first check
// (taken off the lanes, with the slot held) waits for `release`.
struct HeldRequest {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> first{true};
  // Whether the request got to its first check (a failure, not a hang, when it never does).
  bool wait_entered() {
    return entered.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  }
  RequestInfo info() {
    RequestInfo i;
    i.cancelled = [this] {
      if (!ComputeLane::on_a_lane() && first.exchange(false)) {
        entered.set_value();
        released.wait();
      }
      return false;
    };
    return i;
  }
};

TEST(ServeQueue, AFullQueueAnswers429WithRetryAfter) {
  test::TempDir dir;
  test::write_file(dir / "serve.yaml", "limits: {max_queue: 1}\nmodels:\n  domain: " + (kModels / "domain").string() + "\n");
  const Service service(ServeConfig::from_yaml(dir / "serve.yaml"));
  HeldRequest held;
  Reply first;
  std::thread t([&] { first = service.handle("POST", "/v1/classify", R"({"model": "domain", "input": "a"})", held.info()); });
  EXPECT_TRUE(held.wait_entered());  // the first holds the one slot
  const Reply second = service.handle("POST", "/v1/classify", R"({"model": "domain", "input": "b"})");
  held.release.set_value();
  t.join();
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(second.status, 429);
  bool retry_after = false;
  for (const auto& [name, value] : second.headers) retry_after |= name == "Retry-After";
  EXPECT_TRUE(retry_after);
}

// A request still waiting for its batch at its deadline is answered, its
// items uncomputed with deadline_exceeded (the runtime contract's item
// error); the config's limit and the request's header both count, the
// shorter winning.
TEST(ServeDeadline, ARequestPastItsDeadlineIsNotComputed) {
  test::TempDir dir;
  test::write_file(dir / "serve.yaml", "limits: {request_timeout_ms: 60000}\nmodels:\n  domain: {path: " +
                                           (kModels / "domain").string() + ", max_batch: 4, max_wait_us: 200000}\n");
  const Service service(ServeConfig::from_yaml(dir / "serve.yaml"));
  const std::string request = R"({"model": "domain", "input": "a"})";
  RequestInfo hurried;
  hurried.timeout_ms = 20;  // the batch waits 200 ms for company
  const auto item_error = [](const Reply& r) {
    return nlohmann::json::parse(r.body)["results"][0].value("error", std::string());
  };
  const Reply late = service.handle("POST", "/v1/classify", request, hurried);
  EXPECT_EQ(late.status, 200) << late.body;
  EXPECT_EQ(item_error(late), "deadline_exceeded") << late.body;
  EXPECT_EQ(item_error(service.handle("POST", "/v1/classify", request)), "");  // 60 s is enough
  RequestInfo long_ago;
  long_ago.arrived -= std::chrono::seconds(61);  // its headers came before the config's limit
  EXPECT_EQ(item_error(service.handle("POST", "/v1/classify", request, long_ago)), "deadline_exceeded");
}

TEST(ServeConfigFile, RefusesBadConfigsNamingTheField) {
  test::TempDir dir;
  const auto refused = [&](const std::string& yaml, const std::string& needle) {
    test::write_file(dir / "serve.yaml", yaml);
    test::expect_error([&] { ServeConfig::from_yaml(dir / "serve.yaml"); }, ErrorCode::kInvalidModel, needle);
  };
  const std::string model = "models:\n  domain: " + (kModels / "domain").string() + "\n";
  refused("listen: 8080\n" + model, "listen: expected host:port");
  refused("limits: {max_body_bytes: .nan}\n" + model, "limits.max_body_bytes: must be a finite number");
  refused("threads: 8\n" + model, "threads: unknown field");  // a thread per connection: no pool to size
  refused("limits: {max_queue: 0}\n" + model, "limits.max_queue: must be a finite number in [1");
  refused("limits: {frobs: 1}\n" + model, "limits.frobs: unknown field");
  refused("models:\n  ../etc: x\n", "'../etc': a name is");
  refused("models:\n  d: {path: x, task: speak}\n", "models.d.task");
  refused("socket_mode: rwx\n" + model, "socket_mode");
  refused("{}\n", "nothing to serve");
  refused("limits: {request_timeout_ms: -5}\n" + model, "limits.request_timeout_ms");
  refused("detectors:\n  d: {path: x, template: guess}\n", "detectors.d.template");
  refused("detectors:\n  d: {path: x, threshold: 2}\n", "detectors.d.threshold");
  refused("detectors:\n  d: {nli: x}\n", "detectors.d.path: missing");
  refused(model + "models:\n  other: x\n", ":3: the key 'models' appears twice");  // not the second ignored
  refused("limits: {max_queue: 2, max_queue: 3}\n" + model, "the key 'max_queue' appears twice");
  refused("limits: {max_check_windows: 0}\n" + model, "limits.max_check_windows");
  test::write_file(dir / "ok.yaml", model);
  const ServeConfig c = ServeConfig::from_yaml(dir / "ok.yaml");
  EXPECT_EQ(c.listen, "127.0.0.1:8080");  // loopback unless told otherwise
  test::write_file(dir / "missing-model.yaml", "models:\n  x: " + (dir / "nowhere").string() + "\n");
  test::expect_error([&] { Service(ServeConfig::from_yaml(dir / "missing-model.yaml")); }, ErrorCode::kNotFound,
                     "models.x");
}

TEST(ServeReload, EachRouterReloadsOnItsOwn) {
  test::TempDir dir;
  const auto router = [&](const std::string& file, const std::string& model) {
    test::write_file(dir / file, "signals: {urgent: {kind: keywords, keywords: [urgent]}}\n"
                                 "decisions: [{name: urgent, when: urgent, model: " + model + "}]\n");
  };
  router("a.yaml", "a-llm");
  router("b.yaml", "b-llm");
  test::write_file(dir / "serve.yaml", "routers:\n  a: a.yaml\n  b: b.yaml\n");
  Service service(ServeConfig::from_yaml(dir / "serve.yaml"));
  const std::string request = R"({"model": "auto", "messages": [{"role": "user", "content": "urgent: help"}]})";
  const auto model_of = [&](const std::string& name) {
    return nlohmann::json::parse(service.handle("POST", "/v1/route?router=" + name, request).body)["model"];
  };
  EXPECT_EQ(model_of("a"), "a-llm");
  test::write_file(dir / "a.yaml", "decisions: [{name: x, when: \"nope.score > 1\"}]\n");  // broken
  router("b.yaml", "b2-llm");
  const std::vector<std::string> failures = service.reload_routers();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("routers.a"), std::string::npos) << failures[0];
  EXPECT_EQ(model_of("a"), "a-llm");   // the old config still serves
  EXPECT_EQ(model_of("b"), "b2-llm");  // the good one loaded anyway
  router("a.yaml", "a2-llm");
  EXPECT_TRUE(service.reload_routers().empty());
  EXPECT_EQ(model_of("a"), "a2-llm");
}

// Server-sent events as (event, data) pairs.
std::vector<std::pair<std::string, nlohmann::json>> parse_events(const std::string& body) {
  std::vector<std::pair<std::string, nlohmann::json>> events;
  size_t at = 0;
  for (size_t end; (end = body.find("\n\n", at)) != std::string::npos; at = end + 2) {
    const std::string block = body.substr(at, end - at);
    const size_t newline = block.find('\n');
    EXPECT_EQ(block.rfind("event: ", 0), 0u) << block;
    EXPECT_EQ(block.compare(newline + 1, 6, "data: "), 0) << block;
    events.emplace_back(block.substr(7, newline - 7), nlohmann::json::parse(block.substr(newline + 7)));
  }
  EXPECT_EQ(at, body.size()) << "a partial event at the end";
  return events;
}

const std::string kContext = "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair.";
const std::string kQuestion = "When was it built?";
const std::string kAnswer = "It was finished in 1889. It is made of cheese! Gustave Eiffel's company built it.";

// An OpenAI stream of `text` in deltas of a few bytes.
std::string sse_of(const std::string& text) {
  std::string out = ": keep-alive\n\n";
  for (size_t i = 0; i < text.size(); i += 7)
    out += "data: " + nlohmann::json({{"choices", {{{"delta", {{"content", text.substr(i, 7)}}}}}}}).dump() + "\n\n";
  return out + "data: [DONE]\n\n";
}

class ServeAnswers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    test::write_hallucination_models(dir_->path());
    test::write_file(*dir_ / "serve.yaml", "detectors:\n  random: random\n  all: {path: flags_all, threshold: 0.5}\n");
    service_ = new Service(ServeConfig::from_yaml(*dir_ / "serve.yaml"));
  }
  static void TearDownTestSuite() {
    delete service_;
    delete dir_;
  }
  static Reply call(const std::string& method, const std::string& path, const std::string& body = "") {
    return service_->handle(method, path, body);
  }
  static test::TempDir* dir_;
  static Service* service_;
};
test::TempDir* ServeAnswers::dir_ = nullptr;
Service* ServeAnswers::service_ = nullptr;

void expect_same_sentence(const nlohmann::json& event, const SentenceCheck& want) {
  EXPECT_EQ(event["begin"], want.begin);
  EXPECT_EQ(event["end"], want.end);
  EXPECT_EQ(event["text"], want.text);
  EXPECT_NEAR(event["max_score"].get<double>(), want.max_score, 1e-6);
  ASSERT_EQ(event["spans"].size(), want.spans.size());
  for (size_t s = 0; s < want.spans.size(); ++s) {
    EXPECT_EQ(event["spans"][s]["begin"], want.spans[s].begin);
    EXPECT_NEAR(event["spans"][s]["score"].get<double>(), want.spans[s].score, 1e-6);
  }
}

TEST_F(ServeAnswers, CheckAnswerEqualsTheDetectorForTextAndSse) {
  const auto detector = HallucinationDetector::load(*dir_ / "random", "");
  const DetectionResult want = detect(detector, kContext, kQuestion, kAnswer);
  ASSERT_EQ(want.sentences.size(), 3u);
  for (const char* form : {"answer", "stream"}) {
    const nlohmann::json request = {{"detector", "random"}, {"context", kContext}, {"question", kQuestion},
                                    {form, std::string(form) == "answer" ? kAnswer : sse_of(kAnswer)}};
    const Reply r = call("POST", "/v1/check-answer", request.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "text/event-stream");
    const auto events = parse_events(r.body);
    ASSERT_EQ(events.size(), want.sentences.size() + 1) << r.body;
    for (size_t i = 0; i < want.sentences.size(); ++i) {
      EXPECT_EQ(events[i].first, events[i].second["event"]);
      expect_same_sentence(events[i].second, want.sentences[i]);
    }
    EXPECT_EQ(events.back().first, "done");
    EXPECT_EQ(events.back().second["sentences"], 3);
    EXPECT_FALSE(events.back().second["stopped"]);
  }
}

TEST_F(ServeAnswers, AStreamAcrossRequestsEqualsTheOneShotCheck) {
  const auto detector = HallucinationDetector::load(*dir_ / "random", "");
  const DetectionResult want = detect(detector, kContext, kQuestion, kAnswer);
  const Reply opened = call("POST", "/v1/check-answer/streams",
                            nlohmann::json({{"detector", "random"}, {"context", kContext}, {"question", kQuestion}}).dump());
  ASSERT_EQ(opened.status, 201) << opened.body;
  const std::string path = "/v1/check-answer/streams/" + nlohmann::json::parse(opened.body)["stream"].get<std::string>();
  std::vector<nlohmann::json> events;
  const std::string sse = sse_of(kAnswer);
  for (size_t i = 0; i < sse.size(); i += 50) {  // the SSE bytes in arbitrary pieces
    const Reply fed = call("POST", path, sse.substr(i, 50));
    ASSERT_EQ(fed.status, 200) << fed.body;
    const auto body = nlohmann::json::parse(fed.body);
    for (const auto& e : body["events"]) events.push_back(e);
  }
  const Reply finished = call("DELETE", path);
  ASSERT_EQ(finished.status, 200) << finished.body;
  const auto end = nlohmann::json::parse(finished.body);
  for (const auto& e : end["events"]) events.push_back(e);
  ASSERT_EQ(events.size(), want.sentences.size());
  for (size_t i = 0; i < events.size(); ++i) expect_same_sentence(events[i], want.sentences[i]);
  EXPECT_EQ(end["summary"]["sentences"], 3);
  EXPECT_EQ(call("POST", path, "more").status, 404);  // ended
  const Reply metrics = call("GET", "/metrics");
  EXPECT_NE(metrics.body.find("endpoint=\"/v1/check-answer/streams/{id}\""), std::string::npos) << metrics.body;
  EXPECT_EQ(metrics.body.find(path), std::string::npos);  // no label per stream
}

TEST_F(ServeAnswers, AStopEndsTheStream) {
  const Reply opened = call("POST", "/v1/check-answer/streams",
                            nlohmann::json({{"detector", "all"}, {"context", kContext}, {"format", "text"},
                                            {"stop_at", "medium"}}).dump());
  ASSERT_EQ(opened.status, 201) << opened.body;
  const std::string path = "/v1/check-answer/streams/" + nlohmann::json::parse(opened.body)["stream"].get<std::string>();
  const auto fed = nlohmann::json::parse(call("POST", path, "It is made of cheese. It is blue.").body);
  ASSERT_EQ(fed["events"].size(), 1u) << fed;
  EXPECT_EQ(fed["events"][0]["event"], "stop");
  EXPECT_TRUE(fed["stopped"]);
  const auto end = nlohmann::json::parse(call("DELETE", path).body);
  EXPECT_TRUE(end["events"].empty());
  EXPECT_TRUE(end["summary"]["stopped"]);
  EXPECT_EQ(end["summary"]["flagged"], 1);
}

TEST_F(ServeAnswers, BadRequestsAreClearErrors) {
  const auto status = [](const nlohmann::json& request, const std::string& path = "/v1/check-answer") {
    return call("POST", path, request.dump()).status;
  };
  EXPECT_EQ(status({{"detector", "nope"}, {"context", "c"}, {"answer", "a"}}), 404);
  EXPECT_EQ(status({{"detector", "random"}, {"answer", "a"}}), 400);  // no context
  EXPECT_EQ(status({{"detector", "random"}, {"context", "c"}}), 400);  // no answer
  EXPECT_EQ(status({{"detector", "random"}, {"context", "c"}, {"answer", "a"}, {"stream", "a"}}), 400);
  EXPECT_EQ(status({{"detector", "random"}, {"context", "c"}, {"answer", "a"}, {"stop_at", "soon"}}), 400);
  EXPECT_EQ(status({{"detector", "random"}, {"context", "c"}, {"stream", "data: {oops}\n\n"}}), 400);
  EXPECT_EQ(status({{"detector", "random"}, {"context", "c"}, {"format", "xml"}}, "/v1/check-answer/streams"), 400);
  EXPECT_EQ(call("POST", "/v1/check-answer/streams/0123", "x").status, 404);
  EXPECT_EQ(call("DELETE", "/v1/check-answer/streams/0123").status, 404);
  // A malformed chunk ends its stream.
  const Reply opened = call("POST", "/v1/check-answer/streams", R"({"detector": "random", "context": "c"})");
  const std::string path = "/v1/check-answer/streams/" + nlohmann::json::parse(opened.body)["stream"].get<std::string>();
  const Reply bad = call("POST", path, "data: {oops}\n\n");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("SSE event 1"), std::string::npos) << bad.body;
  EXPECT_EQ(call("DELETE", path).status, 404);
}

TEST(ServeAnswerStreams, AreBoundedInCountAndIdleTime) {
  test::TempDir dir;
  test::write_hallucination_models(dir.path());
  test::write_file(dir / "serve.yaml", "limits: {max_streams: 1, stream_idle_ms: 100}\ndetectors:\n  d: random\n");
  const Service service(ServeConfig::from_yaml(dir / "serve.yaml"));
  const std::string open = R"({"detector": "d", "context": "c"})";
  const Reply first = service.handle("POST", "/v1/check-answer/streams", open);
  ASSERT_EQ(first.status, 201);
  const Reply second = service.handle("POST", "/v1/check-answer/streams", open);
  EXPECT_EQ(second.status, 429);
  EXPECT_NE(second.body.find("too_many_streams"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(service.handle("POST", "/v1/check-answer/streams", open).status, 201);  // the idle one was dropped
  const std::string id = nlohmann::json::parse(first.body)["stream"];
  EXPECT_EQ(service.handle("POST", "/v1/check-answer/streams/" + id, "x").status, 404);
}


// Every endpoint that computes, once each, on one service (the default
// models, the example router, a random hallucination detector).
class ServeControl : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    test::write_hallucination_models(dir_->path());
    const std::string m = kModels.string();
    test::write_file(*dir_ / "serve.yaml",
                     // Nothing answered from the result cache: these tests follow requests that compute.
                     "limits: {max_queue: 1, result_cache_entries: 0}\n"
                     "models:\n  domain: " + m + "/domain\n  pii: " + m + "/pii\n"
                     "  encoder: {path: " + m + "/multitask/base, task: embedding}\n"
                     "unified:\n  default: " + m + "/router.yaml\n"
                     "routers:\n  default: " + (test::repo_dir() / "examples/router/router.yaml").string() + "\n"
                     "compressors:\n  short: {max_tokens: 20, tokenizer: " + m + "/domain}\n"
                     "detectors:\n  random: random\n");
    service_ = new Service(ServeConfig::from_yaml(*dir_ / "serve.yaml"));
  }
  static void TearDownTestSuite() {
    delete service_;
    delete dir_;
  }
  struct Call {
    std::string path, body;
  };
  static std::vector<Call> calls() {
    const std::string chat = R"({"model": "auto", "messages": [{"role": "user", "content": "What is 2 + 2?"}]})";
    return {{"/v1/classify", R"({"model": "domain", "input": ["a", "b"]})"},
            {"/v1/tokens", R"({"model": "pii", "input": "Call Ann"})"},
            {"/v1/embeddings", R"({"model": "encoder", "input": "a"})"},
            {"/v1/similarity", R"({"model": "encoder", "a": "a", "b": "b"})"},
            {"/v1/unified", R"({"model": "default", "input": "What is 2 + 2?"})"},
            {"/v1/route", chat},
            {"/v1/compress", R"({"model": "short", "input": "One. Two. Three."})"},
            {"/v1/check-answer", R"({"detector": "random", "context": "Paris is in France.", "answer": "It is. Yes."})"}};
  }
  static bool is_contract(const std::string& path) { return path == "/v1/classify" || path == "/v1/embeddings"; }
  static test::TempDir* dir_;
  static Service* service_;
};
test::TempDir* ServeControl::dir_ = nullptr;
Service* ServeControl::service_ = nullptr;

TEST_F(ServeControl, EveryComputingEndpointAnswersWhenNothingStopsIt) {
  for (const auto& c : calls()) EXPECT_EQ(service_->handle("POST", c.path, c.body).status, 200) << c.path;
}

TEST_F(ServeControl, EveryComputingEndpointHonoursItsDeadline) {
  for (const auto& c : calls()) {
    RequestInfo late;
    late.timeout_ms = 1;
    late.arrived -= std::chrono::seconds(1);
    const Reply r = service_->handle("POST", c.path, c.body, late);
    // The runtime contract's surfaces answer each item deadline_exceeded; semroute's own, 504.
    EXPECT_EQ(r.status, is_contract(c.path) ? 200 : 504) << c.path << ": " << r.body;
    EXPECT_NE(r.body.find("deadline_exceeded"), std::string::npos) << c.path;
  }
}

TEST_F(ServeControl, EveryComputingEndpointStopsForAClientThatLeft) {
  for (const auto& c : calls()) {
    RequestInfo gone;
    gone.cancelled = [] { return true; };
    const Reply r = service_->handle("POST", c.path, c.body, gone);
    EXPECT_EQ(r.status, 503) << c.path << ": " << r.body;
    EXPECT_NE(r.body.find(is_contract(c.path) ? "\"not_ready\"" : "\"cancelled\""), std::string::npos) << c.path;
  }
}

// max_queue 1: while one request holds the queue of what it uses, another
// to the same is answered 429, for every endpoint that computes.
TEST_F(ServeControl, EveryComputingEndpointTakesAQueueSlot) {
  for (const auto& c : calls()) {
    HeldRequest held;
    Reply first;
    std::thread t([&] { first = service_->handle("POST", c.path, c.body, held.info()); });
    EXPECT_TRUE(held.wait_entered()) << c.path << " never checked its control while holding its slot";
    const Reply second = service_->handle("POST", c.path, c.body);
    held.release.set_value();
    t.join();
    EXPECT_EQ(first.status, 200) << c.path << ": " << first.body;
    EXPECT_EQ(second.status, 429) << c.path << ": " << second.body;
  }
}

// Work already started stops at its next step: a route between two signals,
// a long list of texts between two forwards.
TEST_F(ServeControl, StartedWorkStopsAtItsNextStep) {
  const auto cancelled_after = [](int checks) {
    RequestInfo info;
    info.cancelled = [n = std::make_shared<std::atomic<int>>(0), checks] { return n->fetch_add(1) >= checks; };
    return info;
  };
  const std::string chat = R"({"model": "auto", "messages": [{"role": "user", "content": "What is 2 + 2?"}]})";
  // Two checks get the route onto the lane (before and on it); the third is before its first signal.
  EXPECT_EQ(service_->handle("POST", "/v1/route", chat, cancelled_after(2)).status, 503);
  EXPECT_EQ(service_->handle("POST", "/v1/route", chat, cancelled_after(100)).status, 200);
  const nlohmann::json forty = {{"model", "domain"}, {"input", std::vector<std::string>(40, "a")}};
  // (domain batches: one check per piece of 32 texts) the first piece computed, the second not.
  EXPECT_EQ(service_->handle("POST", "/v1/classify", forty.dump(), cancelled_after(1)).status, 503);
  EXPECT_EQ(service_->handle("POST", "/v1/classify", forty.dump(), cancelled_after(100)).status, 200);
}

TEST_F(ServeControl, MetricsLabelsComeFromAFixedSet) {
  const std::string forged = "/x\"} 1\nfake{a=\"";
  EXPECT_EQ(service_->handle("GET", forged, "").status, 404);
  for (int i = 0; i < 200; ++i) service_->handle("GET", "/unknown/" + std::to_string(i), "");
  const std::string text = service_->handle("GET", "/metrics", "").body;
  EXPECT_EQ(text.find("fake"), std::string::npos) << text;
  EXPECT_EQ(text.find("/unknown/"), std::string::npos);
  EXPECT_NE(text.find("semroute_requests_total{endpoint=\"other\",status=\"404\"} 201"), std::string::npos) << text;
}

TEST_F(ServeControl, ABodyWithANulByteIsRefused) {
  const std::string body = std::string(R"({"model": "domain", "input": "a"})") + '\0' + "junk";
  const Reply r = service_->handle("POST", "/v1/classify", body);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("NUL byte at 33"), std::string::npos) << r.body;
}

// A long answer check yields the compute lane between sentences: another
// model's request, sent while the check is between two sentences, is
// answered before the check goes on.
TEST_F(ServeControl, AnAnswerCheckLeavesTheLaneToOtherModels) {
  std::promise<void> between, classified;
  std::shared_future<void> go_on = classified.get_future().share();
  std::atomic<int> checks{0};
  RequestInfo info;
  info.cancelled = [&] {
    if (!ComputeLane::on_a_lane() && checks.fetch_add(1) == 1) {  // before the second sentence
      between.set_value();
      go_on.wait();
    }
    return false;
  };
  Reply check;
  std::thread t([&] {
    check = service_->handle("POST", "/v1/check-answer",
                             R"({"detector": "random", "context": "Paris is in France.", "answer": "One. Two. Three."})",
                             info);
  });
  EXPECT_EQ(between.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the check never left the lane between two sentences";
  EXPECT_EQ(service_->handle("POST", "/v1/classify", R"({"model": "domain", "input": "a"})").status, 200);
  classified.set_value();
  t.join();
  EXPECT_EQ(check.status, 200) << check.body;
}

TEST(ServeAnswerChecks, AreBoundedInContextWindowsRead) {
  test::TempDir dir;
  test::write_hallucination_models(dir.path());
  test::write_file(dir / "serve.yaml", "limits: {max_check_windows: 2}\ndetectors:\n  d: {path: random, windows: 0, max_length: 256}\n");
  const Service service(ServeConfig::from_yaml(dir / "serve.yaml"));
  const nlohmann::json two = {{"detector", "d"}, {"context", "Paris is in France."}, {"answer", "One. Two."}};
  EXPECT_EQ(service.handle("POST", "/v1/check-answer", two.dump()).status, 200);
  nlohmann::json three = two;
  three["answer"] = "One. Two. Three.";
  const Reply refused = service.handle("POST", "/v1/check-answer", three.dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.find("more than 2 context windows"), std::string::npos) << refused.body;
  // A long context: every window counts (windows: 0 reads them all).
  std::string context;
  for (int i = 0; i < 100; ++i) context += "Sentence number " + std::to_string(i) + " of the context says little. ";
  const nlohmann::json wide = {{"detector", "d"}, {"context", context}, {"answer", "One."}};
  EXPECT_EQ(service.handle("POST", "/v1/check-answer", wide.dump()).status, 400);
}

// Open streams are bounded by the bytes their pinned contexts hold, not only by their count.
TEST(ServeAnswerStreams, AreBoundedInBytes) {
  test::TempDir dir;
  test::write_hallucination_models(dir.path());
  std::string context;
  for (int i = 0; i < 400; ++i) context += "Line " + std::to_string(i) + " of the context names the river and the mill. ";
  const size_t one = HallucinationDetector::load(dir / "random", "")->pin(context, "")->memory_bytes();
  ASSERT_GT(one, 30000u);  // (the limit's floor is 64 KiB)
  test::write_file(dir / "serve.yaml", "limits: {max_stream_bytes: " + std::to_string(2 * one + one / 2) +
                                           "}\ndetectors:\n  d: random\n");
  const Service service(ServeConfig::from_yaml(dir / "serve.yaml"));
  const std::string open = nlohmann::json({{"detector", "d"}, {"context", context}}).dump();
  const Reply first = service.handle("POST", "/v1/check-answer/streams", open);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(service.handle("POST", "/v1/check-answer/streams", open).status, 201);
  const Reply third = service.handle("POST", "/v1/check-answer/streams", open);
  EXPECT_EQ(third.status, 429);
  EXPECT_NE(third.body.find("limits.max_stream_bytes"), std::string::npos) << third.body;
  const std::string id = nlohmann::json::parse(first.body)["stream"];
  EXPECT_EQ(service.handle("DELETE", "/v1/check-answer/streams/" + id, "").status, 200);
  EXPECT_EQ(service.handle("POST", "/v1/check-answer/streams", open).status, 201);  // its bytes were given back
}

// The idle clock of a stream runs between feeds, not during one: a feed
// longer than stream_idle_ms keeps its stream, even while others open.
TEST(ServeAnswerStreams, AFeedLongerThanTheIdleTimeKeepsItsStream) {
  test::TempDir dir;
  test::write_hallucination_models(dir.path());
  test::write_file(dir / "serve.yaml", "limits: {stream_idle_ms: 500}\ndetectors:\n  d: random\n");
  const Service service(ServeConfig::from_yaml(dir / "serve.yaml"));
  const std::string open = R"({"detector": "d", "context": "Paris is in France.", "format": "text"})";
  const std::string path =
      "/v1/check-answer/streams/" + nlohmann::json::parse(service.handle("POST", "/v1/check-answer/streams", open).body)["stream"].get<std::string>();
  std::atomic<bool> first{true};
  RequestInfo slow;
  slow.cancelled = [&] {
    if (!ComputeLane::on_a_lane() && first.exchange(false)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(700));  // the feed outlasts the idle time
      EXPECT_EQ(service.handle("POST", "/v1/check-answer/streams", open).status, 201);  // drops idle streams
    }
    return false;
  };
  EXPECT_EQ(service.handle("POST", path, "One. Two. ", slow).status, 200);
  const Reply done = service.handle("DELETE", path, "");
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(nlohmann::json::parse(done.body)["summary"]["sentences"], 2);
}

// A chunk holding invalid UTF-8 is the one refused, at once; a character
// split between chunks is not an error.
TEST(ServeAnswerStreams, TheChunkWithTheBadByteIsBlamed) {
  test::TempDir dir;
  test::write_hallucination_models(dir.path());
  test::write_file(dir / "serve.yaml", "detectors:\n  d: random\n");
  const Service service(ServeConfig::from_yaml(dir / "serve.yaml"));
  const auto open = [&] {
    const Reply r = service.handle("POST", "/v1/check-answer/streams", R"({"detector": "d", "context": "c", "format": "text"})");
    return "/v1/check-answer/streams/" + nlohmann::json::parse(r.body)["stream"].get<std::string>();
  };
  const std::string split = open();
  EXPECT_EQ(service.handle("POST", split, "It costs 5 \xE2\x82").status, 200);  // the start of a euro sign
  EXPECT_EQ(service.handle("POST", split, "\xAC. Fine.").status, 200);
  for (const std::string piece : {"A smile: \xF0\x9F", "\x98", "\x80. Yes."})  // one character over three pieces
    EXPECT_EQ(service.handle("POST", split, piece).status, 200) << piece;
  EXPECT_EQ(service.handle("DELETE", split, "").status, 200);
  for (const std::string bad : {"ab\xC0", "ab\xE0\x80", "ab\xED\xA0", "ab\xFF"}) {  // lone, overlong, surrogate, never
    const std::string path = open();
    const Reply r = service.handle("POST", path, bad);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_NE(r.body.find("invalid_utf8"), std::string::npos) << r.body;
    EXPECT_EQ(service.handle("POST", path, "fine").status, 404);  // the stream ended with it
  }
  const std::string cut = open();
  EXPECT_EQ(service.handle("POST", cut, "ends in \xE2\x82").status, 200);
  EXPECT_EQ(service.handle("DELETE", cut, "").status, 400);  // the answer ends inside a character
}

}  // namespace
}  // namespace semroute

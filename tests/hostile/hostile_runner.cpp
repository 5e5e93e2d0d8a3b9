// Runs the hostile-input corpus (cases.jsonl written by make_corpus.py)
// through the public C API, one forked child per case, so that a crash, a hang
// or a runaway allocation is reported as that case's failure instead of
// ending the run. Each child runs under an address-space limit (RLIMIT_AS: its
// size at start plus the case's budget) and an alarm.
//
//   hostile_runner CORPUS_DIR [--only SUBSTRING] [--verbose]
//
// A case passes when the call returns one of the expected codes ("ok" also
// requires every returned number to be finite). The summary is one line per
// family; the exit code is 1 when any case failed.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "semroute/semroute.h"

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // shadow memory needs terabytes of address space
#else
constexpr bool kSanitized = false;
#endif

struct Outcome {
  std::string code;  // a semroute_code_name, "nonfinite", or set by the parent: "crash …", "timeout"
  std::string message;
};

// The case's text: "text", "text_hex" (arbitrary bytes) or "text_repeat" [unit, count].
std::string case_text(const json& c) {
  if (c.contains("text_hex")) {
    const std::string hex = c["text_hex"];
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return bytes;
  }
  if (c.contains("text_repeat")) {
    const std::string unit = c["text_repeat"][0];
    const size_t count = c["text_repeat"][1];
    std::string text;
    text.reserve(unit.size() * count);
    for (size_t i = 0; i < count; ++i) text += unit;
    return text;
  }
  return c.value("text", std::string("Hello world, this is a test."));
}

Outcome from_status(semroute_status* status) {
  Outcome out{semroute_code_name(semroute_status_code(status)), semroute_status_message(status)};
  semroute_status_free(status);
  return out;
}

bool finite(const float* values, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i])) return false;
  return true;
}

Outcome nonfinite(const char* what) { return Outcome{"nonfinite", std::string(what) + " returned a NaN or Inf"}; }

// Runs the loaded model's own task on `text`.
Outcome run_model_task(const semroute_model* model, const std::string& text) {
  switch (semroute_model_task(model)) {
    case SEMROUTE_TASK_SEQUENCE_CLASSIFICATION: {
      semroute_classifications* results = nullptr;
      semroute_status* s = semroute_classify(model, text.data(), text.size(), &results);
      if (s != nullptr) return from_status(s);
      size_t n = 0;
      const float* p = semroute_classifications_probabilities(results, 0, &n);
      const bool ok = finite(p, n) && std::isfinite(semroute_classifications_confidence(results, 0));
      semroute_classifications_free(results);
      return ok ? Outcome{"ok", ""} : nonfinite("classify");
    }
    case SEMROUTE_TASK_TOKEN_CLASSIFICATION: {
      semroute_token_results* results = nullptr;
      semroute_status* s = semroute_token_classify(model, text.data(), text.size(), &results);
      if (s != nullptr) return from_status(s);
      size_t n = 0;
      const semroute_token_label* const* tokens = semroute_token_results_tokens(results, 0, &n);
      bool ok = true;
      for (size_t i = 0; i < n; ++i) ok = ok && std::isfinite(tokens[i]->probability);
      semroute_token_results_free(results);
      return ok ? Outcome{"ok", ""} : nonfinite("token_classify");
    }
    default: {
      std::vector<float> out(semroute_model_embedding_dim(model));
      semroute_status* s = semroute_embed(model, text.data(), text.size(), out.data(), out.size());
      if (s != nullptr) return from_status(s);
      return finite(out.data(), out.size()) ? Outcome{"ok", ""} : nonfinite("embed");
    }
  }
}

// Load parameters from the case: one compute thread, and the tokenizer and
// adapter paths it names (kept alive in `paths`).
semroute_model_params case_params(const json& c, const fs::path& root, std::vector<std::string>& paths) {
  semroute_model_params params = semroute_model_default_params();
  params.threads = 1;
  paths.reserve(2);
  for (const char* key : {"tokenizer", "adapter"}) {
    if (!c.contains(key)) continue;
    paths.push_back((root / c[key].get<std::string>()).string());
    (std::string(key) == "tokenizer" ? params.tokenizer : params.adapter) = paths.back().c_str();
  }
  return params;
}

Outcome run_model(const json& c, const fs::path& root) {
  std::vector<std::string> paths;
  semroute_model_params params = case_params(c, root, paths);
  params.merge_adapter = c.value("merge_adapter", 1);
  params.max_length = c.value("max_length", 0u);
  params.truncation = c.value("truncation", 0);
  semroute_model* model = nullptr;
  const std::string path = (root / c["path"].get<std::string>()).string();
  if (semroute_status* s = semroute_model_load(path.c_str(), &params, &model)) return from_status(s);
  // "truncate_after_load": the weights file shrinks on disk while the model is loaded.
  if (c.contains("truncate_after_load")) fs::resize_file(root / c["truncate_after_load"].get<std::string>(), 100);
  Outcome out = run_model_task(model, case_text(c));
  semroute_model_free(model);
  return out;
}

Outcome run_task_results(semroute_status* s, semroute_task_results* results) {
  if (s != nullptr) return from_status(s);
  Outcome out{"ok", ""};
  for (size_t i = 0; i < semroute_task_results_count(results); ++i) {
    size_t n = 0;
    const semroute_task_answer* const* answers = semroute_task_results_answers(results, i, &n);
    for (size_t a = 0; a < n && out.code == "ok"; ++a) {
      const semroute_task_answer& answer = *answers[a];
      if (answer.error != nullptr)  // every path of this task failed: its error is the outcome
        out = Outcome{semroute_code_name(static_cast<semroute_code>(answer.error_code)), answer.error};
      else if (!std::isfinite(answer.confidence) || !finite(answer.probabilities, answer.num_labels))
        out = nonfinite("task classify");
    }
  }
  semroute_task_results_free(results);
  return out;
}

// One text in the offsets layout of the batch calls.
struct OneText {
  std::string text;
  uint64_t offsets[2];
  explicit OneText(std::string t) : text(std::move(t)), offsets{0, text.size()} {}
};

Outcome run_engine(const json& c, const fs::path& root) {
  std::vector<std::string> paths;
  const semroute_model_params params = case_params(c, root, paths);
  std::vector<std::string> names, dirs;
  for (const auto& [name, dir] : c["adapters"].items()) {
    names.push_back(name);
    dirs.push_back((root / dir.get<std::string>()).string());
  }
  std::vector<semroute_engine_task> tasks(names.size());
  for (size_t i = 0; i < names.size(); ++i) tasks[i] = {sizeof(semroute_engine_task), names[i].c_str(), dirs[i].c_str(), 0};
  semroute_engine* engine = nullptr;
  const std::string base = (root / c["path"].get<std::string>()).string();
  if (semroute_status* s = semroute_engine_load(base.c_str(), tasks.data(), tasks.size(), &params, &engine))
    return from_status(s);
  const OneText one(case_text(c));
  semroute_task_results* results = nullptr;
  semroute_status* s = semroute_engine_classify(engine, one.text.data(), one.offsets, 1, nullptr, nullptr, 0, &results);
  Outcome out = run_task_results(s, results);
  semroute_engine_free(engine);
  return out;
}

Outcome run_unified(const json& c, const fs::path& root) {
  semroute_unified* unified = nullptr;
  const std::string path = (root / c["path"].get<std::string>()).string();
  if (semroute_status* s = semroute_unified_load(path.c_str(), &unified)) return from_status(s);
  const OneText one(case_text(c));
  semroute_task_results* results = nullptr;
  semroute_status* s =
      semroute_unified_classify(unified, one.text.data(), one.offsets, 1, nullptr, nullptr, 0, 0, &results);
  Outcome out = run_task_results(s, results);
  semroute_unified_free(unified);
  return out;
}

// Batch calls with the offsets (and count) the case gives, over its text.
Outcome run_batch(const json& c, const fs::path& root) {
  std::vector<std::string> paths;
  const semroute_model_params params = case_params(c, root, paths);
  semroute_model* model = nullptr;
  const std::string path = (root / c["path"].get<std::string>()).string();
  if (semroute_status* s = semroute_model_load(path.c_str(), &params, &model)) return from_status(s);
  const std::string text = case_text(c);
  const std::vector<uint64_t> offsets = c["offsets"].get<std::vector<uint64_t>>();
  const size_t count = c.value("count", offsets.empty() ? size_t{0} : offsets.size() - 1);
  const uint64_t* offsets_ptr = c.value("null_offsets", false) ? nullptr : offsets.data();
  const char* texts = c.value("null_texts", false) ? nullptr : text.data();
  semroute_status* s = nullptr;
  if (semroute_model_task(model) == SEMROUTE_TASK_EMBEDDING) {
    const size_t capacity = c.value("capacity", count * semroute_model_embedding_dim(model));
    std::vector<float> out(std::min<size_t>(capacity, 1u << 20));
    s = semroute_embed_batch(model, texts, offsets_ptr, count, out.data(), capacity);
  } else {
    semroute_classifications* results = nullptr;
    s = semroute_classify_batch(model, texts, offsets_ptr, count, &results);
    semroute_classifications_free(results);
  }
  semroute_model_free(model);
  return s != nullptr ? from_status(s) : Outcome{"ok", ""};
}

Outcome run_case(const json& c, const fs::path& root) {
  const std::string op = c["op"];
  if (op == "model") return run_model(c, root);
  if (op == "engine") return run_engine(c, root);
  if (op == "unified") return run_unified(c, root);
  if (op == "batch") return run_batch(c, root);
  return Outcome{"runner", "unknown op " + op};
}

size_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Forks, runs the case in the child, and reads its outcome from a pipe.
Outcome run_isolated(const json& c, const fs::path& root, int timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) return Outcome{"runner", "pipe failed"};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (!kSanitized) {
      const rlim_t limit = address_space_bytes() + c.value("budget_mb", size_t{192}) * (size_t{1} << 20);
      const rlimit rl{limit, limit};
      setrlimit(RLIMIT_AS, &rl);
    }
    alarm(static_cast<unsigned>(timeout_s));
    Outcome out;
    try {
      out = run_case(c, root);
    } catch (const std::exception& e) {
      out = Outcome{"runner", std::string("exception escaped: ") + e.what()};
    }
    const std::string line = json{{"code", out.code}, {"message", out.message}}.dump();
    if (write(fds[1], line.data(), line.size()) < 0) _exit(3);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string reply;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) reply.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGALRM) return Outcome{"timeout", "no answer within " + std::to_string(timeout_s) + " s"};
    return Outcome{"crash", std::string("killed by ") + strsignal(sig)};
  }
  if (reply.empty()) return Outcome{"crash", "exited with status " + std::to_string(WEXITSTATUS(status))};
  const json r = json::parse(reply);
  return Outcome{r["code"], r["message"]};
}

bool expected(const json& c, const Outcome& out) {
  for (const auto& code : c["expect"])
    if (code == out.code) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: hostile_runner CORPUS_DIR [--only SUBSTRING] [--verbose]\n";
    return 2;
  }
  const fs::path root = argv[1];
  std::string only;
  bool verbose = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--only" && i + 1 < argc) only = argv[++i];
    if (std::string(argv[i]) == "--verbose") verbose = true;
  }
  const int timeout_s = kSanitized ? 120 : 30;
  std::ifstream manifest(root / "cases.jsonl");
  if (!manifest) {
    std::cerr << "no " << (root / "cases.jsonl") << ": run make_corpus.py first\n";
    return 2;
  }
  struct Tally {
    int passed = 0, failed = 0;
  };
  std::map<std::string, Tally> families;
  std::string line;
  int failures = 0;
  while (std::getline(manifest, line)) {
    const json c = json::parse(line);
    const std::string name = c["name"];
    if (!only.empty() && name.find(only) == std::string::npos) continue;
    const auto start = std::chrono::steady_clock::now();
    const Outcome out = run_isolated(c, root, c.value("timeout_s", timeout_s));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool ok = expected(c, out);
    Tally& tally = families[c["family"].get<std::string>()];
    (ok ? tally.passed : tally.failed)++;
    if (!ok) ++failures;
    if (!ok || verbose)
      std::printf("%s %-48s %-16s %6.2fs  (expected %s) %s\n", ok ? "ok  " : "FAIL", name.c_str(), out.code.c_str(),
                  seconds, c["expect"].dump().c_str(), out.message.substr(0, 240).c_str());
  }
  std::printf("\n%-22s %6s %6s\n", "family", "passed", "failed");
  for (const auto& [family, tally] : families) std::printf("%-22s %6d %6d\n", family.c_str(), tally.passed, tally.failed);
  std::printf("%d case(s) failed\n", failures);
  return failures == 0 ? 0 : 1;
}

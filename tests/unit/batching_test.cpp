// Dynamic batching: concurrent single-text calls through the C API with
// max_batch > 1 give the answers of unbatched calls (classification,
// token classification, embeddings); a bad text fails only its own call; the
// Batcher coalesces (counted) and rejects absurd settings.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <set>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "core/runtime.h"
#include "models/random_model.h"
#include "semroute/semroute.h"
#include "tasks/batcher.h"
#include "tasks/sequence_classifier.h"
#include "tasks/text_batch.h"
#include "tasks/token_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

using ModelPtr = std::unique_ptr<semroute_model, decltype(&semroute_model_free)>;

ModelPtr load(const std::string& dir, uint32_t max_batch, uint32_t max_wait_us,
              semroute_task task = SEMROUTE_TASK_AUTO) {
  semroute_model_params params = semroute_model_default_params();
  params.task = task;
  params.max_batch = max_batch;
  params.max_wait_us = max_wait_us;
  semroute_model* model = nullptr;
  semroute_status* status = semroute_model_load(dir.c_str(), &params, &model);
  EXPECT_EQ(status, nullptr) << semroute_status_message(status);
  semroute_status_free(status);
  return ModelPtr(model, &semroute_model_free);
}

std::vector<std::string> texts() {
  std::vector<std::string> out;
  for (int i = 0; i < 48; ++i) {
    std::string text = "question " + std::to_string(i) + ":";
    for (int w = 0; w < i % 13 + 1; ++w) text += " word" + std::to_string((i * 7 + w) % 29);
    out.push_back(text);
  }
  return out;
}

// One answer per text as bytes: label, probabilities / vector, exactly.
using Answer = std::vector<float>;

Answer classify(const semroute_model* model, const std::string& text) {
  semroute_classifications* out = nullptr;
  semroute_status* status = semroute_classify(model, text.data(), text.size(), &out);
  if (status != nullptr) {
    ADD_FAILURE() << semroute_status_message(status);
    semroute_status_free(status);
    return {};
  }
  size_t n = 0;
  const float* p = semroute_classifications_probabilities(out, 0, &n);
  Answer answer(p, p + n);
  answer.push_back(static_cast<float>(semroute_classifications_class_id(out, 0)));
  semroute_classifications_free(out);
  return answer;
}

Answer embed(const semroute_model* model, const std::string& text) {
  Answer row(semroute_model_embedding_dim(model));
  semroute_status* status = semroute_embed(model, text.data(), text.size(), row.data(), row.size());
  if (status != nullptr) ADD_FAILURE() << semroute_status_message(status);
  semroute_status_free(status);
  return row;
}

Answer token_labels(const semroute_model* model, const std::string& text) {
  semroute_token_results* out = nullptr;
  semroute_status* status = semroute_token_classify(model, text.data(), text.size(), &out);
  if (status != nullptr) {
    ADD_FAILURE() << semroute_status_message(status);
    semroute_status_free(status);
    return {};
  }
  size_t n = 0;
  const semroute_token_label* const* tokens = semroute_token_results_tokens(out, 0, &n);
  Answer answer;
  for (size_t i = 0; i < n; ++i) answer.insert(answer.end(), {static_cast<float>(tokens[i]->label_id), tokens[i]->probability});
  semroute_token_results_free(out);
  return answer;
}

// 16 threads each send every third text, one call per text, at the same time.
template <class Call>
void expect_batched_equals_unbatched(const std::string& dir, Call call, semroute_task task = SEMROUTE_TASK_AUTO) {
  const auto plain = load(dir, 0, 0, task), batched = load(dir, 8, 2000, task);
  const auto all = texts();
  std::vector<Answer> expected;
  for (const auto& text : all) expected.push_back(call(plain.get(), text));
  std::vector<std::vector<Answer>> got(16, std::vector<Answer>(all.size()));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t % 3; i < all.size(); i += 3) got[t][i] = call(batched.get(), all[i]);
    });
  for (auto& thread : threads) thread.join();
  for (size_t t = 0; t < got.size(); ++t)
    for (size_t i = t % 3; i < all.size(); i += 3) {
      ASSERT_EQ(got[t][i].size(), expected[i].size());
      float worst = 0;
      for (size_t k = 0; k < expected[i].size(); ++k) worst = std::max(worst, std::abs(got[t][i][k] - expected[i][k]));
      // Bitwise equal where oneDNN's kernels are chosen per row count (AVX-512);
      // its GEMM-based kernels (AVX2) may split a product's sum differently
      // for another row count: float rounding, far below any answer.
      EXPECT_LE(worst, 1e-5f) << dir << ": text " << i << " from thread " << t;
    }
}

using Batching = test::IntentAndPiiModels;

TEST_F(Batching, ClassificationEqualsUnbatched) { expect_batched_equals_unbatched(path("intent"), classify); }
TEST_F(Batching, TokenClassificationEqualsUnbatched) { expect_batched_equals_unbatched(path("pii"), token_labels); }
TEST_F(Batching, EmbeddingsEqualUnbatched) {
  // An embedding handle on the same checkpoint (pooling of the encoder).
  expect_batched_equals_unbatched(path("intent"), embed, SEMROUTE_TASK_EMBEDDING);
}

TEST_F(Batching, ABadTextFailsOnlyItsOwnCall) {
  const auto batched = load(path("intent"), 8, 20000);
  std::atomic<int> failed{0}, answered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      const std::string text = t == 3 ? std::string("bad \xff\xfe utf-8") : "a good text " + std::to_string(t);
      semroute_classifications* out = nullptr;
      semroute_status* status = semroute_classify(batched.get(), text.data(), text.size(), &out);
      (status == nullptr ? answered : failed)++;
      semroute_status_free(status);
      semroute_classifications_free(out);
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failed.load(), 1);
  EXPECT_EQ(answered.load(), 7);
}

// Each text's length: a forward whose answers say which text they are for.
std::vector<int> sizes_of(const std::vector<std::string_view>& texts) {
  std::vector<int> sizes;
  for (auto t : texts) sizes.push_back(static_cast<int>(t.size()));
  return sizes;
}

// When each forward of a batcher started (forwards may run side by side).
struct ForwardStarts {
  std::mutex mutex;
  std::vector<std::chrono::steady_clock::time_point> starts;
  void record() {
    const std::lock_guard<std::mutex> lock(mutex);
    starts.push_back(std::chrono::steady_clock::now());
  }
  // From the first start to the last, in ms.
  int64_t spread_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(starts.back() - starts.front()).count();
  }
};

// 16 callers fill one batch of 16: one forward. While other processes keep
// the cores busy (ctest runs tests side by side) the two dispatchers each
// take half of what waits, and a dispatcher done before the other takes its
// half halves it again: 8 + 4 + 2 + 1 + 1 at most. What is left of a due
// batch is computed at once, not after another wait (1 s here).
TEST(Batcher, CoalescesConcurrentCalls) {
  ForwardStarts runs;
  Batcher<int> batcher(
      [&](const std::vector<std::string_view>& texts) {
        runs.record();
        return sizes_of(texts);
      },
      BatchingOptions{16, 1000000});
  std::vector<std::thread> threads;
  std::vector<int> got(16, -1);
  const std::vector<std::string> words = [] {
    std::vector<std::string> w;
    for (int i = 0; i < 16; ++i) w.push_back(std::string(i + 1, 'x'));
    return w;
  }();
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] { got[t] = batcher({words[t]}).at(0); });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 16; ++t) EXPECT_EQ(got[t], t + 1);
  ASSERT_GE(runs.starts.size(), 1u);
  EXPECT_LE(runs.starts.size(), 5u);
  EXPECT_LT(runs.spread_ms(), 500) << "what was left of the batch waited again";
  EXPECT_TRUE(batcher(std::vector<std::string_view>{}).empty());
}

// A call whose deadline passes while it waits for its batch is answered
// DeadlinePassed without being computed; the others in the batch are not
// affected, and a call with time to spare is computed.
TEST(Batcher, ACallPastItsDeadlineIsNotComputed) {
  std::atomic<int> computed{0};
  Batcher<int> batcher(
      [&](const std::vector<std::string_view>& texts) {
        computed += static_cast<int>(texts.size());
        return std::vector<int>(texts.size(), 1);
      },
      BatchingOptions{8, 100000});  // the first call of a batch waits 100 ms for company
  const auto soon = Batcher<int>::Clock::now() + std::chrono::milliseconds(10);
  std::thread late([&] { EXPECT_THROW(batcher({"late"}, soon), DeadlinePassed); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto later = Batcher<int>::Clock::now() + std::chrono::seconds(60);
  EXPECT_EQ(batcher({"in time"}, later).at(0), 1);
  late.join();
  EXPECT_EQ(computed.load(), 1);
}

// A call holding a long input computes on the long-input lane: a short call
// made while that forward runs is answered at once, not after it. make(run)
// gives the call under test (text -> its answer) over the forward `run`.
template <class Make>
void expect_short_calls_not_behind_a_long_input(Make make) {
  std::mutex mutex;
  std::condition_variable changed;
  bool long_started = false, release_long = false;
  auto call = make([&](const std::vector<std::string_view>& texts) {
    if (texts.at(0).size() > 100) {
      EXPECT_TRUE(long_input_lane().on_lane());
      std::unique_lock<std::mutex> lock(mutex);
      long_started = true;
      changed.notify_all();
      changed.wait(lock, [&] { return release_long; });
    } else {  // (on contended cores the second dispatcher computes on the sibling lane)
      EXPECT_TRUE(compute_lane().on_lane() || sibling_lane().on_lane());
    }
    return std::vector<int>(texts.size(), static_cast<int>(texts.at(0).size()));
  });
  const std::string long_text(5000, 'x');
  std::thread long_call([&] { EXPECT_EQ(call(long_text), 5000); });
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return long_started; });
  }
  // On one lane the short call would wait until the long forward is released.
  auto short_call = std::async(std::launch::async, [&] { return call("short"); });
  const bool answered_first = short_call.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    release_long = true;
  }
  changed.notify_all();
  long_call.join();
  EXPECT_TRUE(answered_first) << "the short call waited behind the long input's forward";
  EXPECT_EQ(short_call.get(), 5);
}

using Forward = std::function<std::vector<int>(const std::vector<std::string_view>&)>;

TEST(Batcher, ShortCallsDoNotWaitBehindALongInput) {
  std::unique_ptr<Batcher<int>> batcher;
  expect_short_calls_not_behind_a_long_input([&](Forward run) {
    batcher = std::make_unique<Batcher<int>>(run, BatchingOptions{8, 1000, 10},
                                             [](std::string_view text) { return static_cast<int64_t>(text.size()); });
    return [&](std::string_view text) { return (*batcher)({text}).at(0); };
  });
}

// Long calls are not coalesced (a batch of them would multiply the peak
// memory): concurrent long calls compute one forward each.
TEST(Batcher, LongCallsComputeOneAtATime) {
  std::mutex mutex;
  std::vector<size_t> batch_sizes;
  Batcher<int> batcher(
      [&](const std::vector<std::string_view>& texts) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the other calls queue
        const std::lock_guard<std::mutex> lock(mutex);
        batch_sizes.push_back(texts.size());
        return std::vector<int>(texts.size(), 1);
      },
      BatchingOptions{8, 50000, 10}, [](std::string_view text) { return static_cast<int64_t>(text.size()); });
  const std::string long_text(100, 'x');
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; ++i) callers.emplace_back([&] { EXPECT_EQ(batcher({long_text}).at(0), 1); });
  for (auto& t : callers) t.join();
  EXPECT_EQ(batch_sizes, std::vector<size_t>(4, 1));
}

// While other processes keep the cores busy, two dispatchers compute
// batches side by side on two lanes (one would take a single contended
// core): calls that arrive together are shared between them, each still
// answered as alone. Busy child processes make the contention.
TEST(Batcher, BatchesComputeSideBySideOnBusyCores) {
  if (usable_cpus() < 2 || usable_cpus() > 8) GTEST_SKIP() << "needs 2-8 CPUs, not " << usable_cpus();
  const int threads_before = compute_threads();
  set_compute_threads(2);
  std::vector<pid_t> busy;
  for (int i = 0; i < usable_cpus(); ++i) {
    const pid_t child = fork();
    if (child == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // gone with the test, however it ends
      for (;;) {
      }
    }
    busy.push_back(child);
  }
  const auto stop_busy = [&] {
    for (pid_t child : busy) kill(child, SIGKILL);
    for (pid_t child : busy) waitpid(child, nullptr, 0);
    set_compute_threads(threads_before);
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!cores_contended() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!cores_contended()) {
    stop_busy();
    GTEST_SKIP() << "the busy processes did not show in /proc/stat";
  }
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::atomic<int> running{0}, most{0};
  Batcher<int> batcher(
      [&](const std::vector<std::string_view>& texts) {
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        {
          const std::lock_guard<std::mutex> lock(mutex);
          threads.insert(std::this_thread::get_id());
        }
        --running;
        return sizes_of(texts);
      },
      BatchingOptions{16, 100000});
  std::vector<std::thread> callers;
  std::vector<int> got(8, -1);
  for (int t = 0; t < 8; ++t)
    callers.emplace_back(
        [&, t] { got[static_cast<size_t>(t)] = batcher({std::string(static_cast<size_t>(t + 1), 'x')}).at(0); });
  for (auto& caller : callers) caller.join();
  // Many quick calls: the two dispatchers race for the queue (each finds it
  // empty at times) and every call still gets its own answer.
  Batcher<int> quick([](const std::vector<std::string_view>& texts) { return sizes_of(texts); }, BatchingOptions{4, 0});
  std::atomic<int> wrong{0};
  std::vector<std::thread> many;
  for (int t = 0; t < 8; ++t)
    many.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        const std::string text(static_cast<size_t>((t + i) % 13 + 1), 'y');
        if (quick({text}).at(0) != static_cast<int>(text.size())) ++wrong;
      }
    });
  for (auto& caller : many) caller.join();
  // Both dispatchers wait for the same batch and one takes it; a call queued
  // after it still waits its own max_wait_us (the other dispatcher, waking
  // late, once took it at once, computed past its deadline).
  Batcher<int> waiting([](const std::vector<std::string_view>& texts) { return sizes_of(texts); },
                       BatchingOptions{4, 40000});
  int computed_late = 0;
  for (int i = 0; i < 30; ++i) {
    waiting({"a", "b"});
    try {
      waiting({"late"}, Batcher<int>::Clock::now() + std::chrono::milliseconds(5));
      ++computed_late;
    } catch (const DeadlinePassed&) {
    }
  }
  // A full batch is split between the dispatchers, and the half left is
  // computed at once, not after another max_wait_us (1 s here). (Halves of
  // a half, when the other dispatcher is idle again, are due at once too.)
  ForwardStarts split_runs;
  Batcher<int> splitting(
      [&](const std::vector<std::string_view>& texts) {
        split_runs.record();
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        return sizes_of(texts);
      },
      BatchingOptions{8, 1000000});
  std::vector<std::thread> eight;
  for (int t = 0; t < 8; ++t) eight.emplace_back([&] { splitting({"z"}); });
  for (auto& caller : eight) caller.join();
  stop_busy();
  ASSERT_GE(split_runs.starts.size(), 2u);
  EXPECT_LT(split_runs.spread_ms(), 500) << "the half left waited again";
  EXPECT_EQ(computed_late, 0) << "calls were taken before their batch's wait ended";
  EXPECT_EQ(wrong.load(), 0);
  for (int t = 0; t < 8; ++t) EXPECT_EQ(got[static_cast<size_t>(t)], t + 1);
  EXPECT_EQ(most.load(), 2) << "the two dispatchers did not compute at once";
  EXPECT_EQ(threads.size(), 2u);
}

// The engine's and the unified classifier's batchers (per task list) too,
// by the texts' estimated tokens (5,000 bytes: ~1,250).
TEST(KeyedBatcher, ShortCallsDoNotWaitBehindALongInput) {
  std::unique_ptr<KeyedBatcher<int, int>> batcher;
  expect_short_calls_not_behind_a_long_input([&](Forward run) {
    batcher = std::make_unique<KeyedBatcher<int, int>>(
        [run](int, const std::vector<std::string_view>& texts) { return run(texts); }, BatchingOptions{8, 1000});
    return [&](std::string_view text) { return (*batcher)(7, {text}).at(0); };
  });
}

TEST(Batcher, RefusesAbsurdSettings) {
  test::expect_error([] { check_batching({5000, 0}); }, ErrorCode::kInvalidArgument, "max_batch");
  test::expect_error([] { check_batching({8, -1}); }, ErrorCode::kInvalidArgument, "max_wait_us");
  test::expect_error([] { check_batching({8, 2000000}); }, ErrorCode::kInvalidArgument, "max_wait_us");
}

}  // namespace
}  // namespace semroute

namespace semroute {
namespace {

// Labels and confidences of every answer of text 0, as numbers.
std::vector<float> task_answers(semroute_task_results* results) {
  std::vector<float> out;
  size_t n = 0;
  const semroute_task_answer* const* answers = semroute_task_results_answers(results, 0, &n);
  for (size_t i = 0; i < n; ++i) out.insert(out.end(), {static_cast<float>(answers[i]->class_id), answers[i]->confidence});
  semroute_task_results_free(results);
  return out;
}

// 12 threads, each text asked for two kinds of task lists (coalesced only with their own kind).
template <class Call>
void expect_tasks_batched_equal(Call plain, Call batched) {
  const auto all = texts();
  const std::vector<std::vector<std::string>> kinds = {{"domain"}, {}};
  std::vector<std::thread> threads;
  std::atomic<int> compared{0};
  for (int t = 0; t < 12; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < all.size(); i += 12) {
        const auto& kind = kinds[i % 2];
        const auto expected = plain(all[i], kind), got = batched(all[i], kind);
        ASSERT_EQ(got.size(), expected.size());
        for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], expected[k], 1e-5) << all[i];
        ++compared;
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(compared.load(), static_cast<int>(all.size()));
}

// A text and task names as the C API's buffers.
struct Request {
  explicit Request(const std::string& text, const std::vector<std::string>& tasks) : text(text) {
    offsets = {0, text.size()};
    task_offsets.push_back(0);
    for (const auto& t : tasks) {
      names += t;
      task_offsets.push_back(names.size());
    }
  }
  std::string text, names;
  std::vector<uint64_t> offsets, task_offsets;
  size_t task_count() const { return task_offsets.size() - 1; }
};

TEST(BatchingTasks, UnifiedHandlesEqualUnbatched) {
  const auto models = test::repo_dir() / "models";
  test::TempDir dir;
  const std::string tasks = "tasks:\n  domain: {kind: sequence, model: " + (models / "domain").string() + "}\n" +
                            "  security: {kind: sequence, model: " + (models / "jailbreak").string() +
                            ", positive_labels: [jailbreak]}\n";
  test::write_file(dir / "plain.yaml", tasks);
  test::write_file(dir / "batched.yaml", "max_batch: 8\nmax_wait_us: 2000\n" + tasks);
  semroute_unified *plain = nullptr, *batched = nullptr;
  ASSERT_EQ(semroute_unified_load((dir / "plain.yaml").c_str(), &plain), nullptr);
  ASSERT_EQ(semroute_unified_load((dir / "batched.yaml").c_str(), &batched), nullptr);
  const auto call = [](const semroute_unified* u) {
    return [u](const std::string& text, const std::vector<std::string>& tasks) {
      const Request r(text, tasks);
      semroute_task_results* out = nullptr;
      semroute_status* status = semroute_unified_classify(u, r.text.data(), r.offsets.data(), 1, r.names.data(),
                                                          r.task_offsets.data(), r.task_count(), 0, &out);
      EXPECT_EQ(status, nullptr) << semroute_status_message(status);
      semroute_status_free(status);
      return task_answers(out);
    };
  };
  expect_tasks_batched_equal(std::function(call(plain)), std::function(call(batched)));
  semroute_unified_free(plain);
  semroute_unified_free(batched);
  test::write_file(dir / "bad.yaml", "max_batch: 100000\n" + tasks);
  semroute_unified* bad = nullptr;
  semroute_status* status = semroute_unified_load((dir / "bad.yaml").c_str(), &bad);
  EXPECT_NE(std::strstr(semroute_status_message(status), "max_batch"), nullptr) << semroute_status_message(status);
  semroute_status_free(status);
}

TEST(BatchingTasks, EngineHandlesEqualUnbatched) {
  const auto models = test::repo_dir() / "models" / "multitask";
  const std::string domain = (models / "domain").string();
  semroute_engine_task task{sizeof(semroute_engine_task), "domain", domain.c_str(), SEMROUTE_TASK_AUTO};
  semroute_model_params params = semroute_model_default_params();
  semroute_engine *plain = nullptr, *batched = nullptr;
  ASSERT_EQ(semroute_engine_load((models / "base").c_str(), &task, 1, &params, &plain), nullptr);
  params.max_batch = 8;
  params.max_wait_us = 2000;
  ASSERT_EQ(semroute_engine_load((models / "base").c_str(), &task, 1, &params, &batched), nullptr);
  const auto call = [](const semroute_engine* e) {
    return [e](const std::string& text, const std::vector<std::string>& tasks) {
      const Request r(text, tasks);
      semroute_task_results* out = nullptr;
      semroute_status* status = semroute_engine_classify(e, r.text.data(), r.offsets.data(), 1, r.names.data(),
                                                         r.task_offsets.data(), r.task_count(), &out);
      EXPECT_EQ(status, nullptr) << semroute_status_message(status);
      semroute_status_free(status);
      return task_answers(out);
    };
  };
  expect_tasks_batched_equal(std::function(call(plain)), std::function(call(batched)));
  semroute_engine_free(plain);
  semroute_engine_free(batched);
}

}  // namespace
}  // namespace semroute

namespace semroute {
namespace {

// Texts of 3 lengths (tens of tokens), deterministic.
std::vector<std::string> long_list(size_t count) {
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    std::string text = "item " + std::to_string(i % 10);
    for (size_t w = 0; w < 40 + 15 * (i % 3); ++w) text += " word" + std::to_string((i + w * 11) % 97);
    out.push_back(text);
  }
  return out;
}

std::vector<std::string_view> views(const std::vector<std::string>& texts, size_t first = 0, size_t last = SIZE_MAX) {
  return {texts.begin() + static_cast<std::ptrdiff_t>(first),
          texts.begin() + static_cast<std::ptrdiff_t>(std::min(last, texts.size()))};
}

TEST(TokenBudget, BatchesStayWithinTheBudgetInOrder) {
  const auto classifier = SequenceClassifier::load(test::repo_dir() / "models" / "domain");
  const Tokenizer& tokenizer = *classifier->task().tokenizer;
  const std::vector<std::string> texts = long_list(160);
  const auto all = views(texts);
  const int64_t budget = 200;
  size_t next = 0, batches = 0;
  for_each_budgeted_batch(
      texts.size(), [&](size_t first, size_t last) { return tokenizer.encode_batch(views(texts, first, last)); },
      tokenizer, c10::Device(c10::kCPU),
      [&](const TextBatch& batch, size_t first) {
        EXPECT_EQ(first, next);
        const int64_t n = batch.inputs.input_ids.size(0), padded = batch.inputs.input_ids.numel();
        EXPECT_TRUE(padded <= budget || n == 1) << n << " texts, " << padded << " padded tokens";
        for (int64_t i = 0; i < n; ++i) {  // each row is its own text (then padding)
          const auto want = tokenizer.encode(all[first + static_cast<size_t>(i)]).ids;
          const auto& got = batch.encodings[static_cast<size_t>(i)].ids;
          ASSERT_GE(got.size(), want.size());
          EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin())) << first + static_cast<size_t>(i);
        }
        next += static_cast<size_t>(n);
        ++batches;
      },
      budget);
  EXPECT_EQ(next, texts.size());
  EXPECT_GT(batches, 20u);
  // One text longer than the budget runs alone.
  for_each_budgeted_batch(
      texts.size(), [&](size_t first, size_t last) { return tokenizer.encode_batch(views(texts, first, last)); },
      tokenizer, c10::Device(c10::kCPU),
      [&](const TextBatch& batch, size_t) { EXPECT_EQ(batch.inputs.input_ids.size(0), 1); }, 3);
}

TEST(TokenBudget, ALongListEqualsItsParts) {
  // 160 texts of 90-150 tokens: more than one budget (16,384 padded tokens, ~110 such texts).
  const auto models = test::repo_dir() / "models";
  const std::vector<std::string> texts = long_list(160);
  const auto domain = SequenceClassifier::load(models / "domain");
  size_t longest = 0;
  for (const auto& e : domain->task().tokenizer->encode_batch(views(texts))) longest = std::max(longest, e.ids.size());
  ASSERT_GT(static_cast<int64_t>(longest * texts.size()), kBatchTokenBudget) << "the list must need two forwards";
  const auto whole = domain->classify(views(texts));
  ASSERT_EQ(whole.size(), texts.size());
  for (size_t first = 0; first < texts.size(); first += 80) {
    const auto part = domain->classify(views(texts, first, first + 80));
    for (size_t i = 0; i < part.size(); ++i) {
      ASSERT_EQ(part[i].class_id, whole[first + i].class_id) << first + i;
      for (size_t j = 0; j < part[i].probabilities.size(); ++j)
        EXPECT_NEAR(part[i].probabilities[j], whole[first + i].probabilities[j], 1e-5);
    }
  }
  const auto pii = TokenClassifier::load(models / "pii");
  const auto spans = pii->classify(views(texts));
  ASSERT_EQ(spans.size(), texts.size());
  const auto tail = pii->classify(views(texts, 100));  // from inside the first budget to the end
  for (size_t i = 0; i < tail.size(); ++i) {
    ASSERT_EQ(tail[i].tokens.size(), spans[100 + i].tokens.size());
    for (size_t t = 0; t < tail[i].tokens.size(); ++t)
      EXPECT_EQ(tail[i].tokens[t].label_id, spans[100 + i].tokens[t].label_id);
  }
}

}  // namespace
}  // namespace semroute

// Hallucination detection: the SSE reader, the input templates, the span and
// window rules, and the detector end to end on tiny models whose heads are
// steered (a random encoder, a classifier bias that decides), streamed in
// every chunking against the one-shot check.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <string>
#include <vector>

#include "compression/sentence_splitter.h"
#include "hallucination/answer_stream.h"
#include "hallucination/hallucination_detector.h"
#include "hallucination/sse_reader.h"
#include "test_util.h"

namespace semroute {
namespace {

using test::data_dir;
using test::expect_error;

std::string sse_event(const std::string& content) {
  return "data: " + nlohmann::json{{"choices", {{{"index", 0}, {"delta", {{"content", content}}}}}}}.dump() + "\n\n";
}

// An OpenAI stream of `text` in pieces of `piece` bytes, with a role event, a
// comment, a keep-alive and [DONE]; CRLF line ends when `crlf`.
std::string sse_stream(const std::string& text, size_t piece, bool crlf) {
  std::string s = ": keep-alive\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n";
  for (size_t i = 0, n = 0; i < text.size(); ++n) {
    size_t end = std::min(text.size(), i + piece);
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;  // whole characters
    s += sse_event(text.substr(i, end - i));
    if (n % 3 == 0) s += ": ping\n\n";
    i = end;
  }
  s += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
  if (!crlf) return s;
  std::string out;
  for (const char c : s) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return out;
}

std::string read_sse(const std::string& stream, size_t chunk) {
  SseReader reader;
  std::string text;
  for (size_t i = 0; i < stream.size(); i += chunk) reader.feed(std::string_view(stream).substr(i, chunk), text);
  reader.finish(text);
  EXPECT_TRUE(reader.done());
  return text;
}

TEST(SseReader, ChunksCutAnywhereGiveTheSameText) {
  const std::string answer = "The capital is Paris. It has 2.1 million people — “roughly”.\nDone.";
  for (const bool crlf : {false, true})
    for (const size_t piece : {1, 5, 100})
      for (const size_t chunk : {1, 2, 7, 64, 4096}) EXPECT_EQ(read_sse(sse_stream(answer, piece, crlf), chunk), answer);
  // Multi-line data, completions' text, null content, no blank line at the end.
  SseReader reader;
  std::string text;
  reader.feed("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":\ndata: [{\"delta\":{\"content\":null}}]}\n\n", text);
  reader.feed("event: x\nid: 1\nretry: 5\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}", text);
  reader.finish(text);
  EXPECT_EQ(text, "ab");
  EXPECT_FALSE(reader.done());
}

TEST(SseReader, MalformedStreamsAreClearErrors) {
  const auto feed = [](const std::string& s, size_t limit = size_t{1} << 20) {
    SseReader reader(limit);
    std::string text;
    reader.feed(s, text);
    reader.finish(text);
  };
  expect_error([&] { feed("data: {not json\n\n"); }, ErrorCode::kInvalidArgument, "SSE event 1: the data is not JSON");
  expect_error([&] { feed("data: [1, 2]\n\n"); }, ErrorCode::kInvalidArgument, "not a JSON object");
  expect_error([&] { feed("data: {\"error\": {\"message\": \"overloaded\"}}\n\n"); }, ErrorCode::kInvalidArgument,
               "overloaded");
  expect_error([&] { feed("data: {\"choices\":[{\"delta\":{\"content\":5}}]}\n\n"); }, ErrorCode::kInvalidArgument,
               "not a string");
  expect_error([&] { feed("data: " + std::string(5000, 'x'), 1024); }, ErrorCode::kTooLong, "longer than 1024");
  expect_error([&] { feed("data: " + std::string(100000, '[') + "\n\n"); }, ErrorCode::kInvalidArgument, "not JSON");
}

TEST(HallucinationRules, InputTemplates) {
  const auto [prompt, answer] = detector_input(DetectorTemplate::kLettuceDetect, "Paris is in France.",
                                               "Where is Paris?", "In France.");
  EXPECT_EQ(prompt,
            "Briefly answer the following question:\nWhere is Paris?\nBear in mind that your response should be "
            "strictly based on the following 1 passages:\npassage 1: Paris is in France.\nIn case the passages do "
            "not contain the necessary information to answer the question, please reply with: \"Unable to answer "
            "based on given passages.\"\noutput:");
  EXPECT_EQ(answer, "In France.");
  EXPECT_EQ(detector_input(DetectorTemplate::kLettuceDetect, "Text.", "", "Sum.").first,
            "Summarize the following text:\nText.\noutput:");
  EXPECT_EQ(detector_input(DetectorTemplate::kHaluGate, "Paris is in France.", "Where is Paris?", "In France."),
            (std::pair<std::string, std::string>{"Paris is in France. Question: Where is Paris? [SEP] In France.", ""}));
  EXPECT_EQ(detector_input(DetectorTemplate::kHaluGate, "C.", "", "A.").first, "C. [SEP] A.");
}

TEST(HallucinationRules, SpansMergeConsecutiveTokensOnly) {
  // answer part: "Before. It has 42 million people here."; the sentence starts at 8.
  const std::string part = "Before. It has 42 million people here.";
  const std::vector<TokenScore> scores = {
      {0, 6, 0.9f},    // "Before": not in the sentence
      {8, 10, 0.2f},   // It
      {10, 14, 0.7f},  // " has"
      {14, 17, 0.9f},  // " 42"
      {17, 17, 0.0f},  // no characters: skipped, does not end the span
      {17, 25, 0.6f},  // " million"
      {25, 32, 0.3f},  // " people": ends the span
      {32, 37, 0.8f},  // " here"
      {37, 38, 0.1f},  // "."
  };
  DetectorOptions options;
  auto spans = spans_from_scores(part, 8, scores, 1000, options);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].text, "has 42 million");  // trimmed of the token's leading space
  EXPECT_EQ(spans[0].begin, 1000u + (11 - 8));
  EXPECT_EQ(spans[0].end, 1000u + (25 - 8));
  EXPECT_NEAR(spans[0].score, 0.9, 1e-6);
  EXPECT_EQ(spans[1].text, "here");
  options.min_span_words = 2;
  EXPECT_EQ(spans_from_scores(part, 8, scores, 0, options).size(), 1u);
  options.min_span_words = 1;
  options.min_span_score = 0.85;
  EXPECT_EQ(spans_from_scores(part, 8, scores, 0, options).size(), 1u);
  options.min_span_score = 0;
  options.threshold = 0.95;
  EXPECT_TRUE(spans_from_scores(part, 8, scores, 0, options).empty());
}

TEST(HallucinationRules, ATokenSupportedByAnyWindowIsSupported) {
  const auto lowest = lowest_scores({{{0, 3, 0.9f}, {3, 6, 0.2f}}, {{0, 3, 0.4f}, {3, 6, 0.7f}, {6, 8, 0.8f}}});
  ASSERT_EQ(lowest.size(), 3u);
  EXPECT_FLOAT_EQ(lowest[0].score, 0.4f);
  EXPECT_FLOAT_EQ(lowest[1].score, 0.2f);
  EXPECT_FLOAT_EQ(lowest[2].score, 0.8f);  // read in one input only
}

// Tiny models: a token classifier steered to `hallucinated` (bias on its
// second label) or not, and an NLI model steered to one label.
class HallucinationModels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    test::write_hallucination_models(dir_->path());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::shared_ptr<const HallucinationDetector> detector(const std::string& tokens, const std::string& nli = "",
                                                               DetectorOptions options = {}, size_t max_length = 0) {
    PipelineOptions pipeline;
    pipeline.max_length = max_length;
    return HallucinationDetector::load(*dir_ / tokens, nli.empty() ? std::filesystem::path() : *dir_ / nli, options,
                                       pipeline);
  }
  static test::TempDir* dir_;
};
test::TempDir* HallucinationModels::dir_ = nullptr;

const std::string kContext =
    "The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall. Paris has about 2.1 million "
    "inhabitants.";
const std::string kAnswer = "The tower was finished in 1889.  It is 330 metres tall!\nParis has 9 million people.";

TEST_F(HallucinationModels, SteeredModelsGiveWholeSentencesOrNothing) {
  const auto all = detect(detector("flags_all"), kContext, "Tell me about the tower.", kAnswer);
  ASSERT_EQ(all.sentences.size(), 3u);
  EXPECT_TRUE(all.hallucinated);
  const std::vector<std::string> sentences = {"The tower was finished in 1889.", "It is 330 metres tall!",
                                              "Paris has 9 million people."};
  for (size_t i = 0; i < 3; ++i) {
    const auto& s = all.sentences[i];
    EXPECT_EQ(kAnswer.substr(s.begin, s.end - s.begin), sentences[i]);
    ASSERT_EQ(s.spans.size(), 1u);
    EXPECT_EQ(s.spans[0].text, sentences[i]);  // every token flagged: one span, the sentence
    EXPECT_EQ(kAnswer.substr(s.spans[0].begin, s.spans[0].end - s.spans[0].begin), sentences[i]);
    EXPECT_GT(s.spans[0].score, 0.99);
    EXPECT_EQ(s.spans[0].severity, 3);  // no NLI model: 3 above a score of 0.8
    EXPECT_EQ(s.spans[0].nli.label, "");
  }
  const auto none = detect(detector("flags_none"), kContext, "", kAnswer);
  EXPECT_FALSE(none.hallucinated);
  EXPECT_LT(none.max_score, 0.01);
  for (const auto& s : none.sentences) EXPECT_TRUE(s.spans.empty());
  // The HaluGate template reads the answer after " [SEP] ": the same spans.
  DetectorOptions halugate;
  halugate.input_template = DetectorTemplate::kHaluGate;
  const auto h = detect(detector("flags_all", "", halugate), kContext, "Tell me about the tower.", kAnswer);
  ASSERT_EQ(h.sentences.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(h.sentences[i].spans.at(0).text, sentences[i]);
}

TEST_F(HallucinationModels, NliExplainsOrFiltersSpans) {
  const auto contradiction = detect(detector("flags_all", "nli_contradiction"), kContext, "", kAnswer);
  for (const auto& s : contradiction.sentences) {
    ASSERT_EQ(s.spans.size(), 1u);
    EXPECT_EQ(s.spans[0].nli.label, "contradiction");
    EXPECT_GT(s.spans[0].nli.contradiction, 0.99);
    EXPECT_EQ(s.spans[0].severity, 4);
  }
  // An entailed sentence's spans are dropped …
  const auto entailed = detect(detector("flags_all", "nli_entailment"), kContext, "", kAnswer);
  EXPECT_FALSE(entailed.hallucinated);
  // … unless filtering is off: then they stay, at severity 1.
  DetectorOptions keep;
  keep.nli_filter = false;
  const auto kept = detect(detector("flags_all", "nli_entailment", keep), kContext, "", kAnswer);
  ASSERT_TRUE(kept.hallucinated);
  EXPECT_EQ(kept.sentences[0].spans[0].severity, 1);
  EXPECT_EQ(kept.sentences[0].spans[0].nli.label, "entailment");
}

TEST_F(HallucinationModels, LongContextsAreReadInMatchingWindows) {
  std::string context;
  for (int i = 0; i < 60; ++i) context += "Filler sentence number " + std::to_string(i) + " says little. ";
  context += "The zeppelin Hindenburg burned at Lakehurst in 1937. ";
  for (int i = 60; i < 120; ++i) context += "Filler sentence number " + std::to_string(i) + " says little. ";
  const auto d = detector("random", "", DetectorOptions{}, 320);
  const auto truth = d->pin(context, "What happened at Lakehurst?");
  ASSERT_GT(truth->windows.size(), 3u);
  // The windows cover every token, overlapping.
  EXPECT_EQ(truth->windows.front().first, 0u);
  EXPECT_EQ(truth->windows.back().end, truth->tokens.size());
  for (size_t w = 1; w < truth->windows.size(); ++w) {
    EXPECT_LT(truth->windows[w].first, truth->windows[w - 1].end);
    EXPECT_GT(truth->windows[w].first, truth->windows[w - 1].first);
  }
  const auto best = matching_windows(*truth, "The Hindenburg burned at Lakehurst.", 1);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_NE(truth->text(best[0]).find("Hindenburg burned at Lakehurst"), std::string_view::npos);
  EXPECT_EQ(matching_windows(*truth, "x", 0).size(), truth->windows.size());
  // Every input fits the model: checking works whatever window is read.
  DetectorOptions all_windows;
  all_windows.context_windows = 0;
  const auto d_all = detector("random", "", all_windows, 320);
  const auto check = d_all->check(*d_all->pin(context, "q"), "", "The Hindenburg burned at Lakehurst in 1937.", 0);
  EXPECT_EQ(check.end, 43u);
}

std::vector<SentenceCheck> streamed(const std::shared_ptr<const HallucinationDetector>& d, const std::string& input,
                                    StreamFormat format, const std::vector<size_t>& cuts) {
  AnswerStream stream(d, d->pin(kContext, "Tell me about the tower."), StreamOptions{format, 0, size_t{1} << 20});
  std::vector<SentenceCheck> out;
  size_t at = 0;
  for (const size_t cut : cuts) {
    for (auto& e : stream.feed(std::string_view(input).substr(at, cut - at))) out.push_back(e.check);
    at = cut;
  }
  for (auto& e : stream.feed(std::string_view(input).substr(at))) out.push_back(e.check);
  for (auto& e : stream.finish()) out.push_back(e.check);
  return out;
}

void expect_same_checks(const std::vector<SentenceCheck>& a, const std::vector<SentenceCheck>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].begin, b[i].begin);
    EXPECT_EQ(a[i].end, b[i].end);
    EXPECT_EQ(a[i].max_score, b[i].max_score);
    ASSERT_EQ(a[i].spans.size(), b[i].spans.size()) << i;
    for (size_t s = 0; s < a[i].spans.size(); ++s) {
      EXPECT_EQ(a[i].spans[s].begin, b[i].spans[s].begin);
      EXPECT_EQ(a[i].spans[s].end, b[i].spans[s].end);
      EXPECT_EQ(a[i].spans[s].score, b[i].spans[s].score);
    }
  }
}

TEST_F(HallucinationModels, AStreamEqualsTheOneShotCheckWhateverTheChunking) {
  DetectorOptions options;
  options.threshold = 0.5;
  const auto d = detector("random", "", options);
  std::string answer = kAnswer + " ";
  for (int i = 0; i < 6; ++i) answer += "Sentence " + std::to_string(i) + " adds e.g. 3.5 facts about Dr. Eiffel. ";
  answer += "```\ncode. Not split!\n```\nThe end";
  const auto one_shot = detect(d, kContext, "Tell me about the tower.", answer).sentences;
  ASSERT_GE(one_shot.size(), 10u);
  size_t spans = 0;
  for (const auto& s : one_shot) spans += s.spans.size();
  EXPECT_GT(spans, 0u) << "the random model should flag something, or the comparison proves little";
  std::vector<size_t> every_byte;
  for (size_t i = 1; i < answer.size(); ++i) every_byte.push_back(i);
  expect_same_checks(streamed(d, answer, StreamFormat::kText, every_byte), one_shot);
  std::mt19937 rng(11);
  for (int round = 0; round < 3; ++round) {
    std::vector<size_t> cuts;
    for (size_t at = rng() % 20; at < answer.size(); at += 1 + rng() % 40) cuts.push_back(at);
    expect_same_checks(streamed(d, answer, StreamFormat::kText, cuts), one_shot);
  }
  for (const bool crlf : {false, true}) {
    const std::string sse = sse_stream(answer, 3, crlf);
    std::vector<size_t> cuts;
    for (size_t at = 5; at < sse.size(); at += 1 + rng() % 30) cuts.push_back(at);
    expect_same_checks(streamed(d, sse, StreamFormat::kSse, cuts), one_shot);
  }
}

TEST_F(HallucinationModels, StopsErrorsAndBoundedMemory) {
  const auto d = detector("flags_all");
  const auto truth = d->pin(kContext, "");
  AnswerStream stopping(d, truth, StreamOptions{StreamFormat::kText, 3, size_t{1} << 20});
  const auto events = stopping.feed("First claim here. Second claim here. Third.");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, StreamEventKind::kStop);
  EXPECT_TRUE(stopping.stopped());
  expect_error([&] { stopping.feed("more"); }, ErrorCode::kInvalidArgument, "stopped");

  AnswerStream sse(d, truth, StreamOptions{StreamFormat::kSse, 0, size_t{1} << 20});
  expect_error([&] { sse.feed("data: {oops}\n\n"); }, ErrorCode::kInvalidArgument, "not JSON");
  expect_error([&] { sse.feed(sse_event("fine")); }, ErrorCode::kInvalidArgument, "earlier chunk failed");

  AnswerStream utf8(d, truth);
  expect_error([&] { utf8.feed("Bad \xff byte. Next sentence."); }, ErrorCode::kInvalidUtf8, "byte 4 of this chunk");
  expect_error([&] { d->pin("   ", "q"); }, ErrorCode::kInvalidArgument, "context is empty");
  expect_error([&] { detect(d, kContext, "", "ok \xc3"); }, ErrorCode::kInvalidUtf8, "byte 3");

  // A long stream without a sentence end, and a long one of sentences: what
  // is held stays bounded.
  const auto quiet = detector("flags_none");
  AnswerStream endless(quiet, quiet->pin(kContext, ""));
  size_t most = 0, events_seen = 0;
  for (int i = 0; i < 200; ++i) {
    events_seen += endless.feed(std::string(100, 'a') + " ").size();
    most = std::max(most, endless.buffered_bytes());
  }
  for (int i = 0; i < 200; ++i) {
    events_seen += endless.feed("This sentence ends. ").size();
    most = std::max(most, endless.buffered_bytes());
  }
  EXPECT_GT(events_seen, 200u);
  EXPECT_LE(most, quiet->options().max_sentence_bytes + kSplitterLookahead + quiet->options().answer_context_bytes + 200);
  EXPECT_EQ(endless.answer_bytes(), 200u * 101 + 200u * 20);
}

TEST_F(HallucinationModels, ManyThreadsShareOneDetector) {
  const auto d = detector("random", "nli_contradiction");
  const auto truth = d->pin(kContext, "Tell me about the tower.");
  const auto expected = detect(d, kContext, "Tell me about the tower.", kAnswer).sentences;
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      AnswerStream stream(d, truth, StreamOptions{t % 2 ? StreamFormat::kSse : StreamFormat::kText, 0, 1 << 20});
      std::vector<SentenceCheck> got;
      const std::string input = t % 2 ? sse_stream(kAnswer, 5, false) : kAnswer;
      for (size_t i = 0; i < input.size(); i += 3 + t)
        for (auto& e : stream.feed(std::string_view(input).substr(i, 3 + t))) got.push_back(e.check);
      for (auto& e : stream.finish()) got.push_back(e.check);
      if (got.size() != expected.size()) ++mismatches;
      for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i)
        if (got[i].spans.size() != expected[i].spans.size() || got[i].end != expected[i].end) ++mismatches;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(HallucinationModels, RefusesModelsWithoutTheirLabels) {
  expect_error([&] { detector("flags_all", "flags_all"); }, ErrorCode::kInvalidModel, "entailment, neutral");
  DetectorOptions bad;
  bad.threshold = 0;
  expect_error([&] { detector("flags_all", "", bad); }, ErrorCode::kInvalidArgument, "threshold");
  expect_error([&] { detector("flags_all", "", DetectorOptions{}, 64)->pin(kContext, std::string(400, 'q')); },
               ErrorCode::kTooLong, "no room for context");
}

}  // namespace
}  // namespace semroute

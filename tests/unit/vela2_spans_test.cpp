// How a Vela 2.0 Span question's word probabilities become its answer: the
// decoding into labelled spans (float32 threshold, unit votes, gap filling,
// trimming, mean probability) and the calibration's thresholds (the
// question's, the PII length rule and buckets, the sparse gate, halu,
// span:<key>, span:*), on the examples the packages' own tests assert.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/vela2_spans.h"

namespace semroute {
namespace {

struct Words {
  std::u32string text;
  WordProbabilities probabilities;
  Words(const std::string& utf8, std::vector<CodePointRange> words, std::vector<std::string> labels, std::vector<double> p)
      : text(code_points(utf8)) {
    probabilities = {&text, std::move(words), std::move(labels), std::move(p)};
  }
  Words(const std::string& utf8, std::vector<std::string> labels, std::vector<double> p) : text(code_points(utf8)) {
    probabilities = {&text, split_words(text), std::move(labels), std::move(p)};
  }
};

// The calibration of the packages' tests (the encoder variant).
nlohmann::ordered_json test_calibration() {
  return nlohmann::ordered_json::parse(R"({
    "temperature": {"choice": 1.3, "score": 1.1, "set": 1.05, "span": 0.4},
    "thresholds": {"set:*": 0.3, "span:toxic": 0.1, "span:halu": 0.55, "span:*": 0.5},
    "pii_types": ["AGE", "CREDIT_CARD", "DATE_TIME", "EMAIL_ADDRESS", "PERSON", "PHONE_NUMBER"],
    "pii_length_rule": {"anchors": [{"n_tokens": 21, "threshold": 0.75}, {"n_tokens": 126, "threshold": 0.05},
                                    {"n_tokens": 1022, "threshold": 0.005919}]},
    "pii_sparse_gate": {"K": 3, "t_sparse": 0.1, "probe_threshold": 0.5}})");
}

TEST(Vela2Spans, OneSpanOverTwoWordsWithTheirMeanProbability) {
  const Words w("Tom Baker said hi", {"A", "B"}, {0.9, 0.1, 0.7, 0.1, 0.1, 0.2, 0.1, 0.1});
  const auto spans = decode_spans(w.probabilities, 0.5);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].label, "A");
  EXPECT_EQ(spans[0].start, 0u);
  EXPECT_EQ(spans[0].end, 9u);
  EXPECT_EQ(spans[0].text, "Tom Baker");
  EXPECT_NEAR(spans[0].probability, 0.8, 1e-6);
}

TEST(Vela2Spans, TheThresholdIsComparedInFloat32) {
  const Words w("x", {{0, 1}}, {"A", "B"}, {0.5000000001, 0.0});  // 0.5 in float32: not over 0.5
  EXPECT_TRUE(decode_spans(w.probabilities, 0.5).empty());
}

TEST(Vela2Spans, WordsOfOneUnitVoteAndFillTheirGaps) {
  const Words w("a.b@c.de", {{0, 3}, {3, 4}, {4, 8}}, {"A", "B"}, {0.9, 0, 0, 0, 0, 0.6});
  const auto spans = decode_spans(w.probabilities, 0.5);
  ASSERT_EQ(spans.size(), 1u);  // A 0.9 outvotes B 0.6; "@" between them joins
  EXPECT_EQ(spans[0].label, "A");
  EXPECT_EQ(spans[0].start, 0u);
  EXPECT_EQ(spans[0].end, 8u);
  EXPECT_NEAR(spans[0].probability, 0.3, 1e-6);
}

TEST(Vela2Spans, AVoteTieGoesToTheLabelSeenFirst) {
  const Words w("x@y.z", {{0, 1}, {1, 3}, {3, 4}, {4, 5}}, {"A", "B"}, {0, 0.8, 0, 0, 0, 0, 0.8, 0});
  const auto spans = decode_spans(w.probabilities, 0.5);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].label, "B");
  EXPECT_EQ(spans[0].text, "x@y.z");
}

TEST(Vela2Spans, GapsAreFilledOnlyBetweenLabelledWords) {
  // "+" shares the unit of "1-555-0100" but comes before its first labelled word.
  const Words w("call +1-555-0100 now", {"A"}, {0, 0, 0.9, 0});
  const auto spans = decode_spans(w.probabilities, 0.5);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].start, 6u);
  EXPECT_EQ(spans[0].end, 16u);
}

TEST(Vela2Spans, SpansAreTrimmedOfBracketsAndQuotes) {
  const Words w("say (\"Tom\") now", {"A"}, {0, 0.9, 0.9, 0.9, 0.9, 0.9, 0});
  const auto spans = decode_spans(w.probabilities, 0.5);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].text, "Tom");
  EXPECT_EQ(spans[0].start, 6u);
}

TEST(Vela2Spans, NoWordsNoSpans) {
  const Words w("", {}, {"A", "B"}, {});
  EXPECT_TRUE(decode_spans(w.probabilities, 0.5).empty());
}

TEST(Vela2Spans, CodePointOffsetsBeyondAscii) {
  const Words w("Zoë 你好 ok", {"A"}, {0.9, 0.2, 0.9, 0.1});
  const auto spans = decode_spans(w.probabilities, 0.5);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].text, "Zoë");
  EXPECT_EQ(spans[0].end, 3u);
  EXPECT_EQ(spans[1].text, "好");
  EXPECT_EQ(spans[1].start, 5u);
}

TEST(Vela2SpanThresholds, ThePiiLengthRuleInterpolatesInLogLog) {
  const auto calibration = test_calibration();
  const Words none("", {}, {"x"}, {});
  const auto at = [&](size_t n) { return span_threshold(calibration, "pii", none.probabilities, n, std::nullopt); };
  EXPECT_NEAR(at(5).value, 0.75, 1e-12);
  EXPECT_EQ(at(5).rule, "pii:length");
  EXPECT_NEAR(at(126).value, 0.05, 1e-12);
  EXPECT_NEAR(at(1000000).value, 0.005919, 1e-12);
  const double f = (std::log(51.0) - std::log(21.0)) / (std::log(126.0) - std::log(21.0));
  EXPECT_NEAR(at(51).value, std::exp(std::log(0.75) + f * (std::log(0.05) - std::log(0.75))), 1e-12);
}

TEST(Vela2SpanThresholds, RulesInOrder) {
  const auto calibration = test_calibration();
  const Words person("", {}, {"PERSON"}, {}), unsupported("", {}, {"unsupported"}, {}), x("", {}, {"x"}, {});
  EXPECT_EQ(span_threshold(calibration, "names", person.probabilities, 126, std::nullopt).rule, "pii:length");
  const SpanThreshold halu = span_threshold(calibration, "halu", unsupported.probabilities, 10, std::nullopt);
  EXPECT_EQ(halu.value, 0.55);
  EXPECT_EQ(halu.rule, "halu");
  const SpanThreshold other = span_threshold(calibration, "other", x.probabilities, 10, std::nullopt);
  EXPECT_EQ(other.value, 0.5);
  EXPECT_EQ(other.rule, "span:*");
  EXPECT_EQ(span_threshold(calibration, "pii", x.probabilities, 10, 0.3).value, 0.3);  // the question's own: no gate
  auto buckets = calibration;
  buckets.erase("pii_length_rule");
  buckets["pii_buckets"] = nlohmann::ordered_json::parse(R"([{"name": "short", "max_tokens": 9, "threshold": 0.7}])");
  const SpanThreshold short_text = span_threshold(buckets, "pii", x.probabilities, 5, std::nullopt);
  EXPECT_EQ(short_text.value, 0.7);
  EXPECT_EQ(short_text.rule, "pii:short");
  EXPECT_EQ(span_threshold(buckets, "pii", x.probabilities, 50, std::nullopt).rule, "span:*");  // no bucket: on
  auto broken = calibration;
  broken["thresholds"].erase("span:*");
  EXPECT_THROW(span_threshold(broken, "other", x.probabilities, 10, std::nullopt), std::out_of_range);
}

TEST(Vela2SpanThresholds, TheSparseGateRaisesALowPiiThreshold) {
  auto calibration = test_calibration();
  const Words w("Tom met Ann", {{0, 3}, {4, 7}, {8, 11}}, {"AGE", "PERSON"}, {0, 0.9, 0, 0, 0, 0.08});
  // 1022 tokens: the length rule gives 0.005919, under t_sparse; one span passes the probe (<= K).
  const SpanThreshold gated = span_threshold(calibration, "pii", w.probabilities, 1022, std::nullopt);
  EXPECT_EQ(gated.value, 0.1);
  EXPECT_EQ(gated.rule, "pii:length+sparse");
  calibration["pii_sparse_gate"]["K"] = 0;  // more spans than K: the rule's threshold stays
  EXPECT_NEAR(span_threshold(calibration, "pii", w.probabilities, 1022, std::nullopt).value, 0.005919, 1e-12);
  EXPECT_EQ(span_threshold(test_calibration(), "pii", w.probabilities, 21, std::nullopt).value, 0.75);  // over t_sparse
}

}  // namespace
}  // namespace semroute

// Entity span aggregation over real tokenizer offsets with hand-made labels.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "tasks/entity_spans.h"
#include "tokenizer_test_util.h"

namespace semroute {
namespace {

const std::vector<std::string> kLabels = {"O", "B-PER", "I-PER", "B-LOC", "I-LOC", "EMAIL"};

// Labels each non-special token by the word it belongs to: `label_of(surface)`.
std::vector<EntitySpan> spans_for(const std::string& text, const std::function<int64_t(const std::string&)>& label_of) {
  const auto& tok = *test::real_tokenizer("modernbert");
  const Encoding e = tok.encode(text);
  std::vector<TokenLabel> labels;
  for (size_t i = 0; i < e.size(); ++i) {
    const std::string surface = e.special_tokens_mask[i] ? "" : text.substr(e.offsets[i].begin, e.offsets[i].end - e.offsets[i].begin);
    labels.push_back({e.special_tokens_mask[i] ? 0 : label_of(surface), 0.5f + 0.1f * static_cast<float>(i % 3)});
  }
  return aggregate_entities(text, e, labels, kLabels);
}

// B-/I- label (ids of kLabels) for a token inside one of `words`: B when the
// token starts the word, I otherwise; O outside.
int64_t by_word(const std::string& s, const std::map<std::string, int64_t>& words) {
  std::string trimmed = s;
  while (!trimmed.empty() && trimmed[0] == ' ') trimmed.erase(0, 1);
  for (const auto& [w, begin_label] : words) {
    const size_t at = trimmed.empty() ? std::string::npos : w.find(trimmed);
    if (at != std::string::npos) return at == 0 ? begin_label : begin_label + 1;
  }
  return 0;
}

TEST(EntitySpans, MultiByteTextKeepsWholeCharacters) {
  const std::string text = "Zoë met 日本 friends 😀 today";
  const auto spans = spans_for(text, [](const std::string& s) {
    return by_word(s, {{"Zoë", 1}, {"日本", 3}, {"😀", 3}});
  });
  ASSERT_GE(spans.size(), 2u);
  EXPECT_EQ(spans[0].type, "PER");
  EXPECT_EQ(spans[0].text, "Zoë");
  EXPECT_EQ(spans[0].begin, 0u);
  EXPECT_EQ(spans[0].end, 4u);
  EXPECT_EQ(spans[1].type, "LOC");
  EXPECT_EQ(spans[1].text, "日本");
  for (const auto& s : spans) {
    EXPECT_EQ(text.substr(s.begin, s.end - s.begin), s.text);
    EXPECT_GT(s.score, 0.0f);
  }
  EXPECT_EQ(spans.back().text, "😀");  // 4-byte emoji split across byte-level tokens, one span
}

TEST(EntitySpans, AdjacentEntitiesStraysAndPlainLabels) {
  const std::string text = "Anna Berlin Paris bob@example.com";
  const auto& tok = *test::real_tokenizer("modernbert");
  const Encoding e = tok.encode(text);
  // Tokens: [CLS] Anna ĠBerlin ĠParis Ġbob @ example . com [SEP]
  std::vector<TokenLabel> labels(e.size(), TokenLabel{0, 0.9f});
  const auto set = [&](const std::string& piece, int64_t label) {
    for (size_t i = 0; i < e.size(); ++i)
      if (!e.special_tokens_mask[i] && text.substr(e.offsets[i].begin, e.offsets[i].end - e.offsets[i].begin).find(piece) != std::string::npos)
        labels[i].label_id = label;
  };
  set("Anna", 2);     // stray I-PER at the very start opens a PER span
  set("Berlin", 3);   // B-LOC right after: a new span
  set("Paris", 3);    // another B-LOC: adjacent but separate
  for (const char* p : {"bob", "@", "example", ".", "com"}) set(p, 5);  // plain label, merged
  const auto spans = aggregate_entities(text, e, labels, kLabels);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].text, "Anna");
  EXPECT_EQ(spans[0].type, "PER");
  EXPECT_EQ(spans[1].text, "Berlin");
  EXPECT_EQ(spans[2].text, "Paris");
  EXPECT_EQ(spans[3].text, "bob@example.com");  // entity at the very end
  EXPECT_EQ(spans[3].type, "EMAIL");
  EXPECT_NEAR(spans[3].score, 0.9f, 1e-6);
}

TEST(EntitySpans, TypeSwitchInsideIStartsANewSpan) {
  const std::string text = "New York City";
  const auto spans = spans_for(text, [](const std::string& s) {
    if (s.find("New") != std::string::npos) return int64_t{3};   // B-LOC
    if (s.find("York") != std::string::npos) return int64_t{4};  // I-LOC
    return s.find("City") != std::string::npos ? int64_t{2} : int64_t{0};  // I-PER: a type switch
  });
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].text, "New York");
  EXPECT_EQ(spans[1].text, "City");
  EXPECT_EQ(spans[1].type, "PER");
}

}  // namespace
}  // namespace semroute

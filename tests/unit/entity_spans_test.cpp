// Entity span aggregation over real tokenizer offsets with hand-made labels,
// token by token and word by word.
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

// `text` with a '|' before every token that starts a word.
std::string word_starts(const std::string& tokenizer, const std::string& text) {
  const Encoding e = test::real_tokenizer(tokenizer)->encode(text);
  std::string marked;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e.special_tokens_mask[i]) {
      EXPECT_FALSE(e.continues_word(text, i));
      continue;
    }
    if (!e.continues_word(text, i)) marked += '|';
    marked += text.substr(e.offsets[i].begin, e.offsets[i].end - e.offsets[i].begin);
  }
  return marked;
}

// Which tokens go on the word before them: pieces of one word (byte-level
// BPE and WordPiece alike), never across a space or punctuation.
TEST(EntitySpans, WordsAreRunsOfLettersAndDigitsAcrossTokens) {
  EXPECT_EQ(word_starts("modernbert", "Maxwell Szegedy, Kovačić-Smith met 日本 at 10:30."),
            "|Maxwell| Szegedy|,| Kovačić|-|Smith| met| |日本| at| 10|:|30|.");
  // WordPiece: "s" "##ze" "##ged" "##y"; its offsets leave the spaces out.
  EXPECT_EQ(word_starts("bert", "Maxwell Szegedy, Kovačić"), "|Maxwell|Szegedy|,|Kovačić");
}

// Word by word, a word takes its first token's label: the pieces of a name
// the model labelled apart ("Max" PER, "well" LOC) make one span, scored by
// the tokens that decided it.
TEST(EntitySpans, WordByWordAWordFollowsItsFirstToken) {
  const std::string text = "Maxwell Szegedy, Kovačić met 日本";
  const Encoding e = test::real_tokenizer("modernbert")->encode(text);
  // [CLS] Max well ĠSz eg edy , ĠK ova Äį iÄĩ Ġmet Ġ 日本 [SEP]
  const std::map<std::string, TokenLabel> by_token = {
      {"Max", {1, 0.9f}}, {"well", {3, 0.1f}}, {" Sz", {2, 0.7f}}, {"eg", {0, 0.1f}}, {"edy", {4, 0.1f}},
      {" K", {1, 0.6f}},  {"ova", {0, 0.1f}},  {"ač", {4, 0.1f}},  {"ić", {0, 0.1f}}, {"日本", {3, 0.8f}}};
  std::vector<TokenLabel> labels;
  for (size_t i = 0; i < e.size(); ++i) {
    const auto it = by_token.find(text.substr(e.offsets[i].begin, e.offsets[i].end - e.offsets[i].begin));
    labels.push_back(it == by_token.end() || e.special_tokens_mask[i] ? TokenLabel{0, 0.99f} : it->second);
  }
  const auto by_words = aggregate_entities(text, e, labels, kLabels, EntityAggregation::kWord);
  ASSERT_EQ(by_words.size(), 3u);
  EXPECT_EQ(by_words[0].text, "Maxwell Szegedy");
  EXPECT_EQ(by_words[0].type, "PER");
  EXPECT_NEAR(by_words[0].score, 0.8f, 1e-6);  // "Max" and " Sz"
  EXPECT_EQ(by_words[1].text, "Kovačić");
  EXPECT_EQ(by_words[1].type, "PER");
  EXPECT_NEAR(by_words[1].score, 0.6f, 1e-6);
  EXPECT_EQ(by_words[2].text, "日本");
  EXPECT_EQ(by_words[2].type, "LOC");
  // Token by token, the same labels cut the names into pieces of two types.
  const auto by_tokens = aggregate_entities(text, e, labels, kLabels, EntityAggregation::kToken);
  ASSERT_GT(by_tokens.size(), 5u);
  EXPECT_EQ(by_tokens[0].text, "Max");
  EXPECT_EQ(by_tokens[1].text, "well");
  EXPECT_EQ(by_tokens[1].type, "LOC");
}

}  // namespace
}  // namespace semroute

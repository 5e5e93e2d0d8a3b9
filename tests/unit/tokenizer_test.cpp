// Tokenizer behaviour: offsets, special tokens, pairs, truncation, padding,
// decoding, bad input, long input, and concurrent use.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tokenizer_test_util.h"
#include "tokenizers/pre_tokenizers.h"
#include "tokenizers/unicode.h"

namespace semroute::test {
namespace {

const char* kMixed =
    "Route this: café naïve résumé — 日本語のテキスト, emoji 😀👍🏽 and code `x += 1;`\n\tTabs  and  spaces. "
    "Email me at jane.doe@example.com or call +1 (555) 010-2030.";

// Bytes a byte-level token stands for (its characters mapped back through
// GPT-2's table), or the token text itself for other vocabularies.
std::string token_bytes(const std::string& name, const std::string& token) {
  if (name == "bert") return token.rfind("##", 0) == 0 ? token.substr(2) : token;
  if (name == "gemma3") {
    std::string out = token;
    for (size_t at = out.find("\xE2\x96\x81"); at != std::string::npos; at = out.find("\xE2\x96\x81", at)) out.replace(at, 3, " ");
    return out;
  }
  std::string out;
  const auto& table = byte_to_unicode();
  for (size_t i = 0; i < token.size();) {
    size_t len;
    const char32_t cp = unicode::decode(token, i, &len);
    for (int b = 0; b < 256; ++b)
      if (table[b] == cp) out += static_cast<char>(b);
    i += len;
  }
  return out;
}

class RealTokenizer : public ::testing::TestWithParam<std::string> {
 protected:
  const Tokenizer& tok() { return *real_tokenizer(GetParam()); }
};

TEST_P(RealTokenizer, OffsetsPointAtEachTokensText) {
  const std::string text = kMixed;
  const Encoding e = tok().encode(text);
  size_t exact = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e.special_tokens_mask[i]) continue;
    const Span o = e.offsets[i];
    ASSERT_LE(o.begin, o.end);
    ASSERT_LE(o.end, text.size());
    const std::string surface = text.substr(o.begin, o.end - o.begin);
    const std::string bytes = token_bytes(GetParam(), e.tokens[i]);
    // Tokens that split a character (byte-level / byte fallback) or that the
    // normalizer changed (BERT lowercases, strips accents) cannot equal it.
    if (bytes == surface) ++exact;
    if (GetParam() != "bert" && bytes.size() == surface.size() &&
        unicode::find_invalid_utf8(bytes) == std::string_view::npos) {
      EXPECT_EQ(bytes, surface) << "token " << i << " " << e.tokens[i];
    }
  }
  EXPECT_GT(exact, e.size() / 2) << "most tokens must map exactly to their text";
  // Offsets never go backwards.
  for (size_t i = 1; i < e.size(); ++i)
    if (!e.special_tokens_mask[i] && !e.special_tokens_mask[i - 1]) {
      EXPECT_GE(e.offsets[i].begin, e.offsets[i - 1].begin);
    }
}

TEST_P(RealTokenizer, RejectsInvalidUtf8Clearly) {
  for (const std::string& bad : {std::string("abc\xff"), std::string("\xc3"), std::string("\xed\xa0\x80"),
                                std::string("\xc0\xaf"), std::string("ok \xf4\x90\x80\x80")}) {
    expect_error([&] { tok().encode(bad); }, ErrorCode::kInvalidUtf8, "not valid UTF-8");
  }
}

TEST_P(RealTokenizer, HandlesEmptyWhitespaceNulAndControlCharacters) {
  EXPECT_EQ(tok().encode("", {false}).size(), 0u);
  tok().encode(" \t\n\r  ");
  tok().encode(std::string("a\0b\0\0c", 6));
  std::string controls;
  for (char32_t c = 0; c < 0x20; ++c) unicode::append_utf8(controls, c);
  for (char32_t c = 0x7F; c < 0xA0; ++c) unicode::append_utf8(controls, c);
  for (char32_t c : {0x200B, 0x200D, 0x2028, 0x2029, 0xFEFF, 0xFFFD}) unicode::append_utf8(controls, c);
  const Encoding e = tok().encode(controls);
  for (const auto& o : e.offsets) EXPECT_LE(o.end, controls.size());
}

TEST_P(RealTokenizer, StaysFastOnHugeInputs) {
  std::string prose;
  while (prose.size() < (1 << 20)) prose += "The quick brown fox jumps over the lazy dog; sphinx of black quartz! ";
  std::string word(100 * 1024, 'a');
  std::string mixed_word;
  while (mixed_word.size() < 100 * 1024) mixed_word += "xq7Zé";
  for (const std::string* text : std::vector<const std::string*>{&prose, &word, &mixed_word}) {
    const auto start = std::chrono::steady_clock::now();
    const Encoding e = tok().encode(*text);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GT(e.size(), 0u);
    EXPECT_LT(seconds, 10.0 * kSlowdown) << GetParam() << ": " << text->size() << " bytes took " << seconds << " s";
  }
}

TEST_P(RealTokenizer, DecodesBackToTheText) {
  const std::string text = "Hello world, this is semroute: 42 tests!";
  const std::string decoded = tok().decode(tok().encode(text).ids);
  if (GetParam() == "bert") {
    EXPECT_EQ(decoded, "hello world, this is semroute : 42 tests!");
  } else {
    EXPECT_EQ(decoded, text);
  }
  expect_error([&] { tok().decode({-5}); }, ErrorCode::kInvalidArgument, "not in the vocabulary");
}

TEST_P(RealTokenizer, IsSafeToShareBetweenThreads) {
  const std::vector<int32_t> expected = tok().encode(kMixed).ids;
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (tok().encode(kMixed).ids != expected) ++mismatches;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Truncating a long text tokenizes only windows at its kept end(s): the kept
// tokens must be exactly those of the whole text's tokenization.
TEST_P(RealTokenizer, TruncatesLongTextsAsTheWholeTextWould) {
  std::string text;
  for (int i = 0; text.size() < 400 * 1024; ++i) text += std::string(kMixed) + (i % 3 ? " " : "\n") + std::to_string(i);
  EncodeOptions whole;
  whole.add_special_tokens = false;
  const Encoding full = tok().encode(text, whole);
  ASSERT_GT(full.size(), 20000u);
  for (const size_t n : {size_t{8}, size_t{512}, size_t{4001}}) {
    for (const Keep keep : {Keep::kStart, Keep::kEnd, Keep::kStartAndEnd}) {
      EncodeOptions cut = whole;
      cut.max_length = n;
      cut.truncation = keep;
      Encoding expected = full;
      expected.truncate(n, keep);
      const Encoding got = tok().encode(text, cut);
      ASSERT_EQ(got.ids, expected.ids) << "max_length " << n << ", keep " << static_cast<int>(keep);
      EXPECT_TRUE(got.truncated);
      EXPECT_EQ(got.input_tokens, 0u);  // only the kept windows were read
      cut.count_input_tokens = true;    // read to the end: the same tokens, counted
      const Encoding counted = tok().encode(text, cut);
      ASSERT_EQ(counted.ids, expected.ids);
      EXPECT_EQ(counted.input_tokens, full.size());
      ASSERT_EQ(got.tokens, expected.tokens);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got.offsets[i].begin, expected.offsets[i].begin) << i;
        ASSERT_EQ(got.offsets[i].end, expected.offsets[i].end) << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, RealTokenizer, ::testing::Values("modernbert", "bert", "qwen3", "gemma3"),
                         [](const auto& info) { return info.param; });

TEST(Tokenizer, AddsTemplateSpecialTokensAndPairs) {
  const auto& bert = *real_tokenizer("bert");
  const Encoding single = bert.encode("hello world");
  EXPECT_EQ(single.ids, (std::vector<int32_t>{101, 7592, 2088, 102}));
  const Encoding pair = bert.encode_pair("a cat", "a dog");
  EXPECT_EQ(pair.ids, (std::vector<int32_t>{101, 1037, 4937, 102, 1037, 3899, 102}));
  EXPECT_EQ(pair.type_ids, (std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(pair.sequence_ids, (std::vector<int8_t>{-1, 0, 0, -1, 1, 1, -1}));

  const auto& modernbert = *real_tokenizer("modernbert");
  const Encoding mb = modernbert.encode_pair("premise", "hypothesis");
  EXPECT_EQ(mb.ids.front(), 50281);  // [CLS] A [SEP] B [SEP]
  EXPECT_EQ(std::count(mb.ids.begin(), mb.ids.end(), 50282), 2);
}

TEST(Tokenizer, TruncatesCountingSpecialTokens) {
  const auto& bert = *real_tokenizer("bert");
  EncodeOptions options;
  options.max_length = 5;
  const Encoding right = bert.encode("one two three four five six", options);
  EXPECT_EQ(right.ids, (std::vector<int32_t>{101, 2028, 2048, 2093, 102}));
  options.truncation = Keep::kEnd;
  const Encoding left = bert.encode("one two three four five six", options);
  EXPECT_EQ(left.ids, (std::vector<int32_t>{101, 2176, 2274, 2416, 102}));
  options.truncation = Keep::kStartAndEnd;
  const Encoding both = bert.encode("one two three four five six", options);
  EXPECT_EQ(both.ids, (std::vector<int32_t>{101, 2028, 2048, 2416, 102}));
  // Longest first for pairs: the longer text loses tokens first.
  options = EncodeOptions{};
  options.max_length = 8;
  const Encoding pair = bert.encode_pair("one two three four five six", "seven eight", options);
  EXPECT_EQ(pair.size(), 8u);
  EXPECT_EQ(std::count(pair.sequence_ids.begin(), pair.sequence_ids.end(), 1), 2);
}

TEST(Tokenizer, AccountsForEveryInputAndRejectsOverflowWhenAsked) {
  const auto& bert = *real_tokenizer("bert");
  EncodeOptions options;
  options.max_length = 5;
  const Encoding fits = bert.encode("one two three", options);
  EXPECT_EQ(fits.input_tokens, 5u);  // [CLS] + 3 + [SEP]
  EXPECT_FALSE(fits.truncated);
  const Encoding cut = bert.encode("one two three four five six", options);
  EXPECT_EQ(cut.input_tokens, 8u);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.size(), 5u);
  const Encoding pair = bert.encode_pair("one two", "three four", options);
  EXPECT_EQ(pair.input_tokens, 7u);  // [CLS] A [SEP] B [SEP]
  EXPECT_TRUE(pair.truncated);
  options.overflow = Overflow::kReject;
  EXPECT_EQ(bert.encode("one two three", options).ids, fits.ids);  // what fits is answered
  expect_error([&] { bert.encode("one two three four five six", options); }, ErrorCode::kTooLong,
               "the input has 8 tokens, more than the limit of 5 (overflow: reject)");
  expect_error([&] { bert.encode_pair("one two", "three four", options); }, ErrorCode::kTooLong, "7 tokens");
  options.max_length = 0;  // no limit: nothing to reject
  EXPECT_FALSE(bert.encode("one two three four five six", options).truncated);
  EXPECT_EQ(parse_overflow("reject"), Overflow::kReject);
  expect_error([] { parse_overflow("drop"); }, ErrorCode::kInvalidArgument, "neither truncate nor reject");
}

TEST(Tokenizer, PadsBatchesLeftOrRight) {
  const auto& qwen = *real_tokenizer("qwen3");
  PaddingOptions padding;
  const auto right = qwen.encode_batch({"a", "a longer sentence here", "", "mid size"}, {}, padding);
  ASSERT_EQ(right.size(), 4u);
  for (const auto& e : right) EXPECT_EQ(e.size(), right[1].size());
  EXPECT_EQ(right[0].attention_mask.back(), 0);
  EXPECT_EQ(right[0].ids.back(), qwen.pad_id());
  EXPECT_EQ(qwen.pad_id(), 151643);  // <|endoftext|>
  padding.side = Side::kLeft;
  padding.length = 16;
  const auto left = qwen.encode_batch({"a", "b c"}, {}, padding);
  EXPECT_EQ(left[0].size(), 16u);
  EXPECT_EQ(left[0].attention_mask.front(), 0);
  EXPECT_EQ(left[0].attention_mask.back(), 1);
}

TEST(Tokenizer, MatchesAddedTokensInsideText) {
  const auto& qwen = *real_tokenizer("qwen3");
  const Encoding e = qwen.encode("<|im_start|>user\nhi<|im_end|><|endoftext|>");
  EXPECT_EQ(e.ids.front(), 151644);
  EXPECT_EQ(e.ids.back(), 151643);
  EXPECT_EQ(e.offsets.front().end, 12u);
  const auto& gemma = *real_tokenizer("gemma3");
  EXPECT_EQ(gemma.encode("<start_of_turn>", {false}).ids.size(), 1u);
}

// WordLevel (Hugging Face's): each pre-tokenized word is its vocabulary id or
// the unk token's, with the word's byte range.
TEST(Tokenizer, WordLevelMapsWholeWords) {
  TempDir dir;
  write_file(dir / "tokenizer.json", R"({"pre_tokenizer": {"type": "Whitespace"},
    "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hello": 1, ",": 2, "猫": 3}, "unk_token": "[UNK]"}})");
  const Encoding e = load_tokenizer(dir.path())->encode("hello, wörld 猫 猫猫");
  EXPECT_EQ(e.ids, (std::vector<int32_t>{1, 2, 0, 3, 0}));
  const std::vector<std::pair<size_t, size_t>> expected = {{0, 5}, {5, 6}, {7, 13}, {14, 17}, {18, 24}};
  ASSERT_EQ(e.size(), expected.size());
  for (size_t i = 0; i < e.size(); ++i) {
    EXPECT_EQ(e.offsets[i].begin, expected[i].first) << i;
    EXPECT_EQ(e.offsets[i].end, expected[i].second) << i;
  }
  write_file(dir / "tokenizer.json", R"({"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "[UNK]"}})");
  expect_error([&] { load_tokenizer(dir.path()); }, ErrorCode::kInvalidModel, "WordLevel unk_token '[UNK]'");
}

TEST(Tokenizer, ExplainsBadFiles) {
  TempDir dir;
  expect_error([&] { load_tokenizer(dir.path()); }, ErrorCode::kNotFound, "no tokenizer.json or tokenizer.model");
  write_file(dir / "tokenizer.json", "{\"model\": ");
  expect_error([&] { load_tokenizer(dir.path()); }, ErrorCode::kInvalidModel, "not valid JSON");
  write_file(dir / "tokenizer.json", R"({"model": {"type": "Unigram", "vocab": []}})");
  expect_error([&] { load_tokenizer(dir.path()); }, ErrorCode::kUnsupported, "model type 'Unigram'");
  write_file(dir / "tokenizer.json",
             R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})");
  expect_error([&] { load_tokenizer(dir.path()); }, ErrorCode::kInvalidModel, "missing from the vocabulary");
  write_file(dir / "tokenizer.json",
             R"({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(["}, "behavior": "Isolated"},
                 "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})");
  expect_error([&] { load_tokenizer(dir.path()); }, ErrorCode::kInvalidModel, "regex does not compile");
}

}  // namespace
}  // namespace semroute::test

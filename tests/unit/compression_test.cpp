// Prompt compression: sentence units (batch and streamed), stop words, the
// funnel's budget on every kind of input, kept ranges that map back.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <string>
#include <vector>

#include "compression/prompt_compressor.h"
#include "compression/sentence_splitter.h"
#include "compression/stop_words.h"
#include "test_util.h"
#include "tokenizers/tokenizer.h"

namespace semroute {
namespace {

using test::expect_error;
using test::repo_dir;

std::vector<std::string> units_of(std::string_view text, size_t max_unit_bytes = 2048) {
  std::vector<std::string> out;
  for (const Span& s : split_units(text, SplitterOptions{max_unit_bytes}))
    out.emplace_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

// The units a reader finds when `text` arrives `step` bytes at a time (at most
// what it has seen, nothing re-read), as answer_stream does.
std::vector<std::string> streamed_units(std::string_view text, size_t step, size_t max_unit_bytes = 2048) {
  const SplitterOptions options{max_unit_bytes};
  std::vector<std::string> out;
  size_t begin = 0, seen = 0;
  for (;;) {
    const bool at_end = seen == text.size();
    const std::string_view visible = text.substr(0, seen);
    begin = skip_whitespace(visible, begin);
    if (begin < visible.size()) {
      if (const auto end = find_unit_end(visible, begin, at_end, options)) {
        out.emplace_back(visible.substr(begin, *end - begin));
        begin = *end;
        continue;
      }
    }
    if (at_end) break;
    seen = std::min(text.size(), seen + step);
  }
  return out;
}

TEST(SentenceSplitter, Sentences) {
  EXPECT_EQ(units_of("Hello there. How are you? Fine!  Great."),
            (std::vector<std::string>{"Hello there.", "How are you?", "Fine!", "Great."}));
  // Abbreviations, initials, dotted forms, decimals, file names, lowercase after a period.
  EXPECT_EQ(units_of("Dr. Smith met J. R. Tolkien in the U.S. on Monday. Pi is 3.14 and e.g. this file.txt is fine. "
                     "It costs approx. five dollars. see more... and more. End"),
            (std::vector<std::string>{"Dr. Smith met J. R. Tolkien in the U.S. on Monday.",
                                      "Pi is 3.14 and e.g. this file.txt is fine.",
                                      "It costs approx. five dollars. see more... and more.", "End"}));
  // Closing quotes and brackets stay with their sentence.
  EXPECT_EQ(units_of("He said \"stop.\" Then (he left.) Next?!"),
            (std::vector<std::string>{"He said \"stop.\"", "Then (he left.)", "Next?!"}));
  // CJK terminators need no space.
  EXPECT_EQ(units_of("今天天气很好。我们去公园吧！好吗？"),
            (std::vector<std::string>{"今天天气很好。", "我们去公园吧！", "好吗？"}));
}

TEST(SentenceSplitter, LinesCodeAndJson) {
  // Hard-wrapped prose continues; list items, JSON lines and blank lines end units.
  EXPECT_EQ(units_of("This sentence is wrapped\nover two lines. Items:\n- one\n- two\n\nnew paragraph"),
            (std::vector<std::string>{"This sentence is wrapped\nover two lines.", "Items:", "- one", "- two",
                                      "new paragraph"}));
  EXPECT_EQ(units_of("{\n  \"a\": 1.5,\n  \"b\": \"x. Y\"\n}"),
            (std::vector<std::string>{"{", "\"a\": 1.5,", "\"b\": \"x. Y\"", "}"}));  // x. = an initial
  // A fenced code block is one unit, whatever it holds.
  const std::string code = "```python\nx = 1. \nprint(x)\n\n# done. Really!\n```";
  EXPECT_EQ(units_of("Look:\n" + code + "\nAfter."), (std::vector<std::string>{"Look:", code, "After."}));
  // An unclosed fence runs to the end.
  EXPECT_EQ(units_of("```\nint x;\n\nint y;"), (std::vector<std::string>{"```\nint x;\n\nint y;"}));
}

TEST(SentenceSplitter, LongUnitsAreCutAtWhitespaceOrACharacter) {
  std::string words;
  for (int i = 0; i < 100; ++i) words += "word" + std::to_string(i) + " ";
  for (const auto& u : units_of(words, 64)) {
    EXPECT_LE(u.size(), 64u);
    EXPECT_NE(u.back(), ' ');
  }
  // No whitespace at all: cut at character boundaries, never inside one.
  std::string runes;
  for (int i = 0; i < 300; ++i) runes += "é漢";
  size_t total = 0;
  for (const auto& u : units_of(runes, 64)) {
    EXPECT_LE(u.size(), 64u);
    EXPECT_NE(static_cast<unsigned char>(u.front()) & 0xC0, 0x80);
    total += u.size();
  }
  EXPECT_EQ(total, runes.size());
}

TEST(SentenceSplitter, AStreamCutAnywhereFindsTheSameUnits) {
  const std::string text =
      "Dr. Smith arrived at 3.15 p.m. on Friday. He said \"hello.\"   Then he left!\n"
      "- item one\n- item two\n\n```\ncode. More code!\n```\n今天很好。Wrapped prose goes\non here. "
      "A sentence with trailing spaces.          and lowercase. Final words";
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "chunk" + std::to_string(i) + (i % 7 == 0 ? ". " : " ");
  // Multi-byte marks cut by a chunk's end at the size limit (found by fuzz_compress).
  const std::string marks = "`find_most_similar`, `tokenize_text`, \u2026) | 6 | table \u3002\u201d next\u2026\u201d Then";
  for (const std::string& t : {text, long_text, marks}) {
    for (const size_t max_unit : {size_t{39}, size_t{48}, size_t{2048}}) {
      const auto whole = units_of(t, max_unit);
      for (const size_t step : {1, 2, 3, 7, 16, 64}) EXPECT_EQ(streamed_units(t, step, max_unit), whole) << step;
    }
  }
}

TEST(StopWords, ListsAndLanguageGuess) {
  std::vector<std::string> languages;
  for (const auto& l : stop_word_lists()) languages.push_back(l.language);
  EXPECT_EQ(languages, (std::vector<std::string>{"de", "en", "es", "fr", "it", "nl", "pt", "ru"}));
  const auto hashes = [](std::string_view text) {
    std::vector<Word> words;
    scan_words(text, 0, words);
    std::vector<uint64_t> out;
    for (const Word& w : words) out.push_back(w.hash);
    return out;
  };
  std::vector<const StopWordList*> all;
  for (const auto& l : stop_word_lists()) all.push_back(&l);
  EXPECT_EQ(guess_language(hashes("The cat sat on the mat and it was happy with the sun."), all)->language, "en");
  EXPECT_EQ(guess_language(hashes("Der Hund ist in dem Garten und er spielt mit dem Ball."), all)->language, "de");
  EXPECT_EQ(guess_language(hashes("Я думаю, что это не так, но он всегда был прав."), all)->language, "ru");
  EXPECT_EQ(guess_language(hashes("x = foo(bar) + baz[qux]"), all), nullptr);
  // Case folding beyond ASCII.
  EXPECT_EQ(hashes("ÜBER Straße")[0], hashes("über")[0]);
  EXPECT_EQ(hashes("don't stop")[0], hashes("DON'T")[0]);
  expect_error([] { stop_word_list("xx"); }, ErrorCode::kInvalidArgument, "there are: de, en");
}

// A long text of our own: filler sentences with a few informative ones.
std::string long_prompt(size_t repeats) {
  std::string text = "Please summarize the attached quarterly report for the board.\n\n";
  for (size_t i = 0; i < repeats; ++i) {
    text += "This is a sentence that is here only to fill the space and it says nothing new. ";
    if (i % 17 == 5) text += "Revenue in Brazil grew 41 percent after the Itaipu contract of March 2026. ";
    if (i % 10 == 9) text += "\n";
  }
  text += "\nWhat was the main driver of growth?";
  return text;
}

void expect_maps_back(std::string_view original, const CompressedText& c) {
  EXPECT_EQ(join_kept(original, c.kept), c.text);
  for (size_t i = 1; i < c.kept.size(); ++i) EXPECT_LE(c.kept[i - 1].end, c.kept[i].begin);
}

TEST(PromptCompressor, AShortTextIsReturnedWhole) {
  const PromptCompressor compressor(CompressOptions{});
  const auto c = compressor.compress("What is the integral of sin(x)?");
  EXPECT_FALSE(c.compressed);
  EXPECT_EQ(c.text, "What is the integral of sin(x)?");
  EXPECT_EQ(c.tokens, 10u);  // What is the integral of sin ( x ) ?
  ASSERT_EQ(c.kept.size(), 1u);
  EXPECT_TRUE(compressor.compress("").text.empty());
}

TEST(PromptCompressor, ATextOfLongTokensThatFitsIsKeptWhole) {
  // 16 bytes a token: longer than the quick check's prefix of 8 bytes a
  // token, so the whole text must be counted before it is judged too long.
  const auto tokenizer = load_tokenizer(test::data_dir() / "tokenizers/modernbert/tokenizer.json");
  std::string text;
  for (int i = 0; i < 50; ++i) text += "responsibilities ";
  const size_t tokens = tokenizer->encode(text, EncodeOptions{false, 0, Keep::kStart}).size();
  ASSERT_GT(text.size(), (tokens + 1) * 8);
  CompressOptions options;
  options.max_tokens = tokens;
  const auto whole = PromptCompressor(options, tokenizer).compress(text);
  EXPECT_FALSE(whole.compressed);
  EXPECT_EQ(whole.tokens, tokens);
  options.max_tokens = tokens - 1;
  const auto cut = PromptCompressor(options, tokenizer).compress(text);
  EXPECT_TRUE(cut.compressed);
  EXPECT_LT(cut.tokens, tokens);
}

TEST(PromptCompressor, KeepsHeadTailAndTheInformativeSentences) {
  const auto tokenizer = load_tokenizer(repo_dir() / "models/domain");
  CompressOptions options;
  options.max_tokens = 96;
  const PromptCompressor compressor(options, tokenizer);
  const std::string text = long_prompt(400);
  const auto c = compressor.compress(text);
  ASSERT_TRUE(c.compressed);
  EXPECT_LE(c.tokens, 96u);
  EXPECT_GE(c.tokens, 60u);  // the budget is used, not wasted
  EXPECT_LE(tokenizer->encode(c.text, EncodeOptions{false, 0, Keep::kStart}).size(), 96u);
  expect_maps_back(text, c);
  EXPECT_EQ(c.language, "en");
  EXPECT_EQ(c.text.rfind("Please summarize the attached quarterly report", 0), 0u) << c.text;
  EXPECT_NE(c.text.find("What was the main driver of growth?"), std::string::npos) << c.text;
  // The informative sentence, without its stop words, made it in; the filler did not.
  EXPECT_NE(c.text.find("Revenue Brazil grew 41 percent"), std::string::npos) << c.text;
  EXPECT_LT(c.units_kept, c.units);
  // Deterministic.
  EXPECT_EQ(compressor.compress(text).text, c.text);
}

TEST(PromptCompressor, EveryInputFitsItsBudget) {
  const auto tokenizer = load_tokenizer(repo_dir() / "models/domain");
  std::string no_boundaries, giant_word, code, mixed, json;
  for (int i = 0; i < 3000; ++i) no_boundaries += "word" + std::to_string(i % 97) + " ";
  giant_word.assign(100000, 'x');
  code = "```cpp\n";
  for (int i = 0; i < 800; ++i) code += "int f" + std::to_string(i) + "(int x) { return x * " + std::to_string(i) + "; }\n";
  code += "```\nWhy does this not compile?";
  for (int i = 0; i < 600; ++i) mixed += "Hello мир 你好世界。 مرحبا بالعالم. Γειά σου κόσμε! こんにちは。 ";
  json = "{\"items\": [";
  for (int i = 0; i < 2000; ++i) json += "{\"id\": " + std::to_string(i) + ", \"name\": \"n" + std::to_string(i) + "\"},";
  json += "{}]}";
  std::mt19937 rng(7);
  std::string random_bytes;
  for (int i = 0; i < 50000; ++i) {
    const char c = static_cast<char>(rng() % 96 + 32);
    random_bytes += (rng() % 50 == 0) ? '\n' : c;
  }
  for (const bool with_tokenizer : {true, false}) {
    for (const size_t budget : {size_t{1}, size_t{7}, size_t{64}, size_t{512}}) {
      for (const bool stop_words : {true, false}) {
        CompressOptions options;
        options.max_tokens = budget;
        options.drop_stop_words = stop_words;
        const PromptCompressor compressor(options, with_tokenizer ? tokenizer : nullptr);
        for (const std::string* text : {&no_boundaries, &giant_word, &code, &mixed, &json, &random_bytes}) {
          const auto c = compressor.compress(*text);
          EXPECT_LE(c.tokens, budget);
          if (with_tokenizer) {
            EXPECT_LE(tokenizer->encode(c.text, EncodeOptions{false, 0, Keep::kStart}).size(), budget);
          }
          expect_maps_back(*text, c);
          if (budget >= 64) {
            EXPECT_FALSE(c.text.empty());
          }
        }
      }
    }
  }
}

TEST(PromptCompressor, ManyThreadsShareOneCompressor) {
  CompressOptions options;
  options.max_tokens = 64;
  const PromptCompressor compressor(options, load_tokenizer(repo_dir() / "models/domain"));
  const std::string text = long_prompt(200);
  const std::string expected = compressor.compress(text).text;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) mismatches += compressor.compress(text).text != expected;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(PromptCompressor, RefusesBadInputAndOptions) {
  const PromptCompressor compressor(CompressOptions{});
  expect_error([&] { compressor.compress(std::string("ok \xff\xfe bad")); }, ErrorCode::kInvalidUtf8, "byte 3");
  CompressOptions zero;
  zero.max_tokens = 0;
  expect_error([&] { PromptCompressor{zero}; }, ErrorCode::kInvalidArgument, "max_tokens");
  CompressOptions ratios;
  ratios.head_ratio = 0.7;
  ratios.tail_ratio = 0.5;
  expect_error([&] { PromptCompressor{ratios}; }, ErrorCode::kInvalidArgument, "sum to at most 1");
  CompressOptions language;
  language.languages = {"en", "klingon"};
  expect_error([&] { PromptCompressor{language}; }, ErrorCode::kInvalidArgument, "klingon");
}

}  // namespace
}  // namespace semroute

// The words a Vela 2.0 Span question reads: splits, units, first sub-word
// tokens and trimming as the published packages make them (the examples of
// docs/decisions.md, reproduced from the packages' own behaviour).
#include <gtest/gtest.h>

#include "runtime/vela2_words.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

std::vector<std::string> texts_of(const std::u32string& text, const std::vector<CodePointRange>& ranges) {
  std::vector<std::string> out;
  for (const auto& [begin, end] : ranges) {
    std::string s;
    for (size_t i = begin; i < end; ++i) unicode::append_utf8(s, text[i]);
    out.push_back(s);
  }
  return out;
}

using Words = std::vector<std::string>;

struct Example {
  std::string text;
  Words words, units;  // units empty: the same as the words
};

const std::vector<Example> kExamples = {
    {"Mail tom.baker@example.com or see https://example.org/a?b=1. @alice 你好",
     {"Mail", "tom.baker@example.com", "or", "see", "https://example.org/a?b=1", ".", "@alice", "你", "好"},
     {}},
    {"state-of-the-art, well_known (yes)!", {"state-of-the-art", ",", "well_known", "(", "yes", ")", "!"}, {}},
    {"HTTPS://X.COM/a), www.a.b\"x\" https:// www.",
     {"HTTPS://X.COM/a", ")", ",", "www.a.b\"x", "\"", "https", ":", "/", "/", "www", "."},
     {"HTTPS", ":", "/", "/", "X.COM", "/", "a", ")", ",", "www.a.b", "\"", "x", "\"", "https", ":", "/", "/", "www."}},
    {"a\u3000b", {"a", "\u3000", "b"}, {"a", "b"}},
    {"o'Neil x_y art-x 42 a--b _ __a a-_b",
     {"o", "'", "Neil", "x_y", "art-x", "42", "a", "-", "-", "b", "_", "__a", "a-_b"},
     {"o", "'", "Neil", "x_y", "art-x", "42", "a--b", "_", "__a", "a-_b"}},
    {"Tom.Baker@Example.COM foo@bar", {"Tom.Baker@Example.COM", "foo", "@bar"}, {"Tom.Baker@Example.COM", "foo@bar"}},
    {"https://a.b/c).你好 (https://x.y/z)", {"https://a.b/c", ")", ".", "你", "好", "(", "https://x.y/z", ")"}, {}},
    {"@Alice_1! me@x.co.uk.", {"@Alice_1", "!", "me@x.co.uk", "."}, {"@Alice_1", "!", "me@x.co.uk."}},
    {"user:pass@host.com http://x", {"user", ":", "pass@host.com", "http://x"}, {}},
    {"3.14 1,000 U.S.A. C++ #tag $5",
     {"3", ".", "14", "1", ",", "000", "U", ".", "S", ".", "A", ".", "C", "+", "+", "#", "tag", "$", "5"},
     {"3.14", "1", ",", "000", "U.S.A.", "C++", "#", "tag", "$", "5"}},
    {"call +1-555-0100 or (555) 123-4567", {"call", "+", "1-555-0100", "or", "(", "555", ")", "123-4567"},
     {"call", "+1-555-0100", "or", "(", "555", ")", "123-4567"}},
    {"https://example.org/dose today.", {"https://example.org/dose", "today", "."}, {"https://example.org/dose", "today."}},
    {"x@y.z a@b.cd", {"x", "@y", ".", "z", "a@b.cd"}, {"x@y.z", "a@b.cd"}},
    {"e\u0301t", {"e", "\u0301", "t"}, {}},
    {"Hi, I'm Tom Baker (tom.baker@example.com).",
     {"Hi", ",", "I", "'", "m", "Tom", "Baker", "(", "tom.baker@example.com", ")", "."}, {}},
};

TEST(Vela2Words, SplitAsThePackagesSplit) {
  for (const Example& e : kExamples) {
    const std::u32string text = code_points(e.text);
    EXPECT_EQ(texts_of(text, split_words(text)), e.words) << e.text;
    EXPECT_EQ(texts_of(text, split_units(text)), e.units.empty() ? e.words : e.units) << e.text;
  }
}

TEST(Vela2Words, EachWordReadsItsFirstSubWordToken) {
  const std::u32string text = code_points("ab cd ef");
  const TokenWords all = words_of(text, {{0, 2}, {2, 2}, {3, 4}, {4, 5}, {6, 8}});
  EXPECT_EQ(all.words, (std::vector<CodePointRange>{{0, 2}, {3, 5}, {6, 8}}));
  EXPECT_EQ(all.first_token, (std::vector<size_t>{0, 2, 4}));
  EXPECT_EQ(words_of(text, {{0, 2}}).words.size(), 1u);  // the others have no token
  EXPECT_TRUE(words_of(code_points(""), {{0, 2}}).words.empty());
  EXPECT_TRUE(words_of(text, {}).words.empty());
}

TEST(Vela2Words, SpansLoseTheirBracketsQuotesAndUrlTails) {
  const std::u32string quoted = code_points("(\"hello\")");
  EXPECT_EQ(trim_span(quoted, 0, 9), CodePointRange(2, 7));
  const std::u32string url = code_points("see www.example.com/x).");
  const CodePointRange kept = trim_span(url, 4, url.size());
  EXPECT_EQ(texts_of(url, {kept}), Words{"www.example.com/x"});
  const std::u32string cjk = code_points("https://a.b/c你好");
  EXPECT_EQ(texts_of(cjk, {trim_span(cjk, 0, cjk.size())}), Words{"https://a.b/c"});
}

}  // namespace
}  // namespace semroute

// SentencePiece .model files through the isolated plugin: ids equal
// spm_encode's, offsets point into the text, bos is added, decode inverts.
// The plugin needs RTLD_DEEPBIND, which sanitizer runtimes do not allow:
// there the loader must refuse clearly, and the test checks that instead.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "tokenizers/tokenizer.h"

namespace semroute {
namespace {

std::shared_ptr<const Tokenizer> load_or_skip() {
  try {
    return load_tokenizer(test::data_dir() / "sentencepiece" / "tiny.model");
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("sanitizer"), std::string::npos) << e.what();
    return nullptr;
  }
}

TEST(SentencePiece, MatchesSpmEncode) {
  const auto tok = load_or_skip();
  if (!tok) GTEST_SKIP() << "SentencePiece is unavailable in sanitizer builds";
  std::ifstream in(test::data_dir() / "sentencepiece" / "reference.json");
  const auto reference = nlohmann::json::parse(in);
  EncodeOptions plain;
  plain.add_special_tokens = false;
  for (const auto& c : reference.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    const Encoding e = tok->encode(text, plain);
    EXPECT_EQ(e.ids, c.at("ids").get<std::vector<int32_t>>()) << text;
    EXPECT_EQ(e.tokens, c.at("pieces").get<std::vector<std::string>>()) << text;
    for (const auto& o : e.offsets) EXPECT_LE(o.end, text.size());
  }
}

TEST(SentencePiece, AddsBosDecodesAndLooksUpPieces) {
  const auto tok = load_or_skip();
  if (!tok) GTEST_SKIP() << "SentencePiece is unavailable in sanitizer builds";
  const Encoding e = tok->encode("Hello world");
  EXPECT_EQ(e.ids.front(), 1);  // <s>
  EXPECT_EQ(e.special_tokens_mask.front(), 1);
  EXPECT_EQ(tok->decode(e.ids), "Hello world");
  EXPECT_EQ(tok->token_to_id("\xE2\x96\x81Hello"), 398);
  EXPECT_FALSE(tok->token_to_id("no-such-piece-xyz").has_value());
  EXPECT_EQ(tok->pad_id(), 3);
  EXPECT_EQ(tok->vocab_size(), 1200u);
  // "Hello" starts at byte 0, "▁world" covers " world".
  EXPECT_EQ(e.offsets[1].begin, 0u);
  EXPECT_EQ(e.offsets[2].end, 11u);
}

TEST(SentencePiece, RefusesBrokenModelFiles) {
  test::TempDir dir;
  test::write_file(dir / "tokenizer.model", "not a protobuf");
  try {
    load_tokenizer(dir.path());
    FAIL() << "a broken model must not load";
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == ErrorCode::kInvalidModel || e.code() == ErrorCode::kUnsupported) << e.what();
  }
}

}  // namespace
}  // namespace semroute

// BERT encoder against Hugging Face BertModel outputs (fp32, eager).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "models/model_factory.h"
#include "reference.h"
#include "tasks/pooling.h"
#include "test_util.h"

namespace semroute {
namespace {

TEST(BertEncoder, MatchesHuggingFace) {
  const auto model = load_core_model(test::data_dir() / "bert_embedding");
  EXPECT_STREQ(model->backend_name(), "bert");
  for (const auto& c : test::load_reference(test::data_dir() / "bert_embedding" / "reference.json")) {
    const at::Tensor hidden = model->forward(c.inputs);
    test::expect_matches(c, "last_hidden_state", hidden);
    test::expect_matches(c, "mean_pooled", mean_pool(hidden, c.inputs.attention_mask));
  }
}

TEST(BertEncoder, LoadsTaskCheckpointsWithThePrefixedNames) {
  // BertForSequenceClassification stores the encoder under "bert.".
  const auto model = load_core_model(test::data_dir() / "bert_seqcls");
  for (const auto& c : test::load_reference(test::data_dir() / "bert_seqcls" / "reference.json")) {
    const at::Tensor hidden = model->forward(c.inputs);
    EXPECT_EQ(hidden.size(2), 64);
    EXPECT_TRUE(hidden.isfinite().all().item<bool>());
  }
}

TEST(BertEncoder, RejectsBadInputs) {
  const auto model = load_core_model(test::data_dir() / "bert_embedding");
  ModelInputs in;
  in.input_ids = at::full({1, 4}, 5, at::kLong);
  in.attention_mask = at::ones_like(in.input_ids);
  in.input_ids[0][2] = 100000;
  test::expect_error([&] { model->forward(in); }, ErrorCode::kInvalidArgument, "token id 100000 is outside [0, 256)");
  in.input_ids[0][2] = 5;
  in.token_type_ids = at::full({1, 4}, 7, at::kLong);
  test::expect_error([&] { model->forward(in); }, ErrorCode::kInvalidArgument, "token type 7");
  in.token_type_ids = at::Tensor();
  in.attention_mask = at::ones({1, 3}, at::kLong);
  test::expect_error([&] { model->forward(in); }, ErrorCode::kInvalidArgument, "attention_mask");
  in.input_ids = at::full({1, 65}, 5, at::kLong);
  in.attention_mask = at::ones_like(in.input_ids);
  test::expect_error([&] { model->forward(in); }, ErrorCode::kTooLong, "exceeds the model's limit of 64");
}

}  // namespace
}  // namespace semroute

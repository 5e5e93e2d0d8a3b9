#include "reference.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/max.h>
#include <ATen/ops/sum.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace semroute::test {
namespace {

at::Tensor int_matrix(const nlohmann::json& rows) {
  std::vector<int64_t> flat;
  for (const auto& row : rows)
    for (const auto& v : row) flat.push_back(v.get<int64_t>());
  return at::from_blob(flat.data(), {static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())},
                       c10::kLong)
      .clone();
}

}  // namespace

at::Tensor ReferenceCase::expected(const std::string& output) const {
  // "intent.logits" names a nested output (the multi-task fixture).
  const auto dot = output.find('.');
  const auto& o = outputs.contains(output) || dot == std::string::npos
                      ? outputs.at(output)
                      : outputs.at(output.substr(0, dot)).at(output.substr(dot + 1));
  std::vector<float> data = o.at("data").get<std::vector<float>>();
  return at::from_blob(data.data(), o.at("shape").get<std::vector<int64_t>>(), c10::kFloat).clone();
}

std::vector<ReferenceCase> load_reference(const std::filesystem::path& reference_json) {
  std::ifstream in(reference_json);
  const auto j = nlohmann::json::parse(in);
  std::vector<ReferenceCase> cases;
  for (const auto& c : j.at("cases")) {
    ReferenceCase rc;
    rc.name = c.at("name").get<std::string>();
    rc.inputs.input_ids = int_matrix(c.at("input_ids"));
    rc.inputs.attention_mask = int_matrix(c.at("attention_mask"));
    if (c.contains("token_type_ids")) rc.inputs.token_type_ids = int_matrix(c.at("token_type_ids"));
    rc.outputs = c.at("outputs");
    cases.push_back(std::move(rc));
  }
  return cases;
}

Agreement compare(const at::Tensor& actual, const at::Tensor& expected, const at::Tensor& attention_mask) {
  at::Tensor a = actual.to(c10::kFloat).cpu();
  at::Tensor e = expected.to(c10::kFloat);
  if (a.dim() >= 2 && a.size(0) == attention_mask.size(0) && a.size(1) == attention_mask.size(1)) {
    const at::Tensor keep = attention_mask.ne(0);
    a = a.index({keep});
    e = e.index({keep});
  }
  Agreement result;
  result.max_abs_error = a.numel() ? at::abs(a - e).max().item<double>() : 0.0;
  const double dot = (a * e).sum().item<double>();
  const double norms = std::sqrt((a * a).sum().item<double>() * (e * e).sum().item<double>());
  result.cosine = norms > 0 ? dot / norms : 1.0;
  return result;
}

void expect_matches(const ReferenceCase& c, const std::string& output, const at::Tensor& actual, double atol) {
  const at::Tensor expected = c.expected(output);
  ASSERT_EQ(actual.sizes(), expected.sizes()) << c.name << "/" << output;
  const Agreement agreement = compare(actual, expected, c.inputs.attention_mask);
  EXPECT_LE(agreement.max_abs_error, atol) << c.name << "/" << output;
  EXPECT_GT(agreement.cosine, 0.99999) << c.name << "/" << output;
  std::printf("    %s/%s: max abs error %.3g, cosine %.9f\n", c.name.c_str(), output.c_str(), agreement.max_abs_error,
              agreement.cosine);
}

}  // namespace semroute::test

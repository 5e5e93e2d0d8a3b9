// Checking model outputs against the fixtures' reference.json (produced by the
// Hugging Face implementations): max abs error and cosine similarity, with
// per-token outputs compared only where attention_mask == 1.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/core_model.h"

namespace semroute::test {

struct ReferenceCase {
  std::string name;
  ModelInputs inputs;
  nlohmann::json outputs;  // name -> {shape, data}

  at::Tensor expected(const std::string& output) const;
};

std::vector<ReferenceCase> load_reference(const std::filesystem::path& reference_json);

struct Agreement {
  double max_abs_error = 0;
  double cosine = 0;
};

// Compares `actual` with `expected`; when their leading dims are the case's
// [batch, seq], only positions with attention_mask == 1 count.
Agreement compare(const at::Tensor& actual, const at::Tensor& expected, const at::Tensor& attention_mask);

// gtest assertion: shapes equal, max abs error <= atol (1e-4 by default), and
// the numbers printed so a run shows how close we are.
void expect_matches(const ReferenceCase& c, const std::string& output, const at::Tensor& actual, double atol = 1e-4);

}  // namespace semroute::test

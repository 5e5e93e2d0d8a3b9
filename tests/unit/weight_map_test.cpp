// WeightMap: prefix resolution, dtype conversion, and complete problem reports.
#include <gtest/gtest.h>

#include "core/weight_map.h"
#include "test_util.h"

namespace semroute {
namespace {

TEST(WeightMap, ResolvesPrefixesAndReportsEveryProblem) {
  test::TempDir dir;
  test::write_file(dir / "model.safetensors",
                   test::safetensors_f32({{"model.a", {2}, {1, 2}}, {"b", {1, 2}, {3, 4}}, {"extra", {1}, {0}}}));
  const auto cp = Checkpoint::open(dir.path());
  WeightMap weights(cp, {"", "model."}, at::TensorOptions().dtype(c10::kBFloat16));
  EXPECT_TRUE(weights.get("a", {2}).defined());
  EXPECT_EQ(weights.get("a").scalar_type(), c10::kBFloat16);
  EXPECT_FALSE(weights.get_optional("maybe").defined());
  weights.check();  // nothing wrong yet

  EXPECT_FALSE(weights.get("b", {2, 1}).defined());
  EXPECT_FALSE(weights.get("missing").defined());
  EXPECT_EQ(weights.unused(), std::vector<std::string>{"extra"});
  try {
    weights.check();
    FAIL() << "check() should throw";
  } catch (const LoadError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("2 problems"), std::string::npos) << m;
    EXPECT_NE(m.find("tensor 'b' has shape [1, 2], expected [2, 1]"), std::string::npos) << m;
    EXPECT_NE(m.find("missing tensor 'missing'"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace semroute

// int8 against float32 on real text: the same classifier loaded both ways
// answers every text of a JSONL file ("text" field), and we count top-1
// agreement and the change in probabilities. Sequence classifiers compare
// their label per text, token classifiers per token.
//
//   semroute_int8_accuracy MODEL_DIR DATA.jsonl [--limit 2000] [--token]
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/runtime.h"
#include "models/packed_gemm.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"

namespace {

struct Tally {
  int64_t items = 0, same = 0;
  double max_dp = 0, sum_dp = 0;
  std::vector<double> dps;

  void add(int64_t a, int64_t b, const std::vector<float>& pa, const std::vector<float>& pb) {
    double dp = 0;
    for (size_t i = 0; i < pa.size(); ++i) dp = std::max(dp, static_cast<double>(std::abs(pa[i] - pb[i])));
    ++items;
    same += a == b;
    max_dp = std::max(max_dp, dp);
    sum_dp += dp;
    dps.push_back(dp);
  }
  void print(const char* what) {
    std::sort(dps.begin(), dps.end());
    std::printf("%s: top-1 agreement %lld / %lld = %.2f %%; |dp| mean %.4f, p99 %.4f, max %.4f\n", what,
                static_cast<long long>(same), static_cast<long long>(items), 100.0 * same / std::max<int64_t>(items, 1),
                sum_dp / std::max<int64_t>(items, 1), dps.empty() ? 0.0 : dps[dps.size() * 99 / 100], max_dp);
  }
};

std::vector<std::string> read_texts(const std::string& path, size_t limit) {
  std::ifstream in(path);
  std::vector<std::string> texts;
  for (std::string line; texts.size() < limit && std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_object() && row.contains("text") && row["text"].is_string()) texts.push_back(row["text"]);
  }
  return texts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL_DIR DATA.jsonl [--limit N] [--token]\n", argv[0]);
    return 2;
  }
  size_t limit = 2000;
  bool token = false;
  for (int i = 3; i < argc; ++i) {
    if (std::string(argv[i]) == "--limit" && i + 1 < argc) limit = std::stoul(argv[++i]);
    if (std::string(argv[i]) == "--token") token = true;
  }
  semroute::ensure_runtime_initialized();
  const auto texts = read_texts(argv[2], limit);
  std::printf("%s; %s on %zu texts of %s; int8 activations %d levels\n", semroute::cpu_features().describe().c_str(),
              argv[1], texts.size(), argv[2], semroute::PackedGemm::activation_levels());
  semroute::TaskOptions fp32, int8;
  int8.load.int8 = true;
  c10::InferenceMode guard;
  Tally tally;
  for (size_t begin = 0; begin < texts.size(); begin += 32) {
    const std::vector<std::string_view> batch(texts.begin() + begin,
                                              texts.begin() + std::min(texts.size(), begin + 32));
    if (token) {
      static const auto a = semroute::TokenClassifier::load(argv[1], fp32), b = semroute::TokenClassifier::load(argv[1], int8);
      const auto ra = a->classify(batch), rb = b->classify(batch);
      for (size_t t = 0; t < ra.size(); ++t)
        for (size_t k = 0; k < ra[t].tokens.size(); ++k)
          tally.add(ra[t].tokens[k].label_id, rb[t].tokens[k].label_id, {ra[t].tokens[k].probability},
                    {rb[t].tokens[k].probability});
    } else {
      static const auto a = semroute::SequenceClassifier::load(argv[1], fp32),
                        b = semroute::SequenceClassifier::load(argv[1], int8);
      const auto ra = a->classify(batch), rb = b->classify(batch);
      for (size_t t = 0; t < ra.size(); ++t) tally.add(ra[t].class_id, rb[t].class_id, ra[t].probabilities, rb[t].probabilities);
    }
  }
  tally.print(token ? "tokens" : "texts");
  return 0;
}

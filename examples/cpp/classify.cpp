// Classifies texts with a semroute sequence classifier through the C++ client
// API (semroute/semroute.hpp):  classify_cpp MODEL_DIR TEXT...
#include <semroute/semroute.hpp>

#include <cstdio>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL_DIR TEXT...\n", argv[0]);
    return 2;
  }
  try {
    auto params = semroute::Model::default_params();
    params.task = SEMROUTE_TASK_SEQUENCE_CLASSIFICATION;
    const auto model = semroute::Model::load(argv[1], params);
    const std::vector<std::string_view> texts(argv + 2, argv + argc);
    const auto labels = model.labels();
    const auto predictions = model.classify(texts);
    for (size_t i = 0; i < texts.size(); ++i) {
      const auto& p = predictions[i];
      std::printf("%-10s %.4f  %.*s\n", p.label.c_str(), p.confidence, static_cast<int>(texts[i].size()),
                  texts[i].data());
      for (size_t k = 0; k < labels.size(); ++k) std::printf("    %-10s %.4f\n", labels[k].c_str(), p.probabilities[k]);
    }
  } catch (const semroute::Error& e) {
    std::fprintf(stderr, "error (%s): %s\n", semroute::error_code_name(e.code()), e.what());
    return 1;
  }
  return 0;
}

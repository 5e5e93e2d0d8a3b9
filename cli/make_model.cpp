// `semroute make-model`: a ModernBERT checkpoint with random weights (see
// models/random_model.h), a pair scorer or a Vela 2.0 package on one
// (runtime/random_vela2.h), for tests and benchmarks.
#include <cstdio>
#include <sstream>

#include "cli.h"
#include "models/random_model.h"
#include "runtime/random_vela2.h"
#include "semroute/error.h"

namespace semroute::cli {

int run_make_model(const Args& args) {
  if (args.positional.size() != 2)
    throw InvalidInput("usage: semroute make-model PRESET OUT_DIR [--labels a,b,c] [--token-labels O,B-X,I-X] "
                       "[--pair-scorer | --vela2 cosine|mlp|both [--max-length N] | --decision2 [--max-length N]] "
                       "[--tokenizer FILE] [--seed N]");
  RandomModelSpec spec;
  spec.preset = args.positional[0];
  spec.token_task = !args.token_labels.empty();
  const auto labels = split_list(spec.token_task ? args.token_labels : args.labels);
  if (!labels.empty()) spec.labels = labels;
  spec.tokenizer = args.tokenizer;
  spec.seed = args.seed;
  if (args.decision2) {
    write_random_decision2(args.seed, args.max_length > 0 ? args.max_length : 2048, args.positional[1]);
    std::printf("wrote %s (Decision 2.0 package, tiny Qwen3 backbone)\n", args.positional[1].c_str());
    return 0;
  }
  if (!args.vela2.empty()) {
    write_random_vela2(spec, args.vela2, args.max_length, args.positional[1]);
    std::printf("wrote %s (Vela 2.0 package on %s, %s readout)\n", args.positional[1].c_str(), spec.preset.c_str(),
                args.vela2.c_str());
    return 0;
  }
  if (args.pair_scorer) {
    write_random_pair_scorer(spec, args.positional[1]);
    std::printf("wrote %s (%s pair scorer)\n", args.positional[1].c_str(), spec.preset.c_str());
    return 0;
  }
  write_random_modernbert(spec, args.positional[1]);
  std::printf("wrote %s (%s, %zu labels)\n", args.positional[1].c_str(), spec.preset.c_str(), spec.labels.size());
  return 0;
}

}  // namespace semroute::cli

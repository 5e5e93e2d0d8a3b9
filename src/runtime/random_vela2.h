// Vela 2.0 packages with random weights in the published layout, for tests
// and benchmarks (`semroute make-model PRESET DIR --vela2`): a ModernBERT
// encoder of a random_model preset under `encoder.`, a random marker head,
// config.json with the eight marker_ids (added-token slots 68 below the end
// of the vocabulary), calibration.json, and the tokenizer with its added
// tokens at those ids named as the markers.
#pragma once

#include <filesystem>
#include <string>

#include "models/random_model.h"

namespace semroute {

// `readout`: cosine, mlp or both; `max_length`: the package's (0: the
// encoder's positions, at most 8,192). InvalidInput for an unknown preset or
// readout, or no tokenizer.
void write_random_vela2(const RandomModelSpec& spec, const std::string& readout, size_t max_length,
                        const std::filesystem::path& dir);

// A Decision 2.0 package with random weights in the published layout
// (`semroute make-model --decision2`): a tiny Qwen3 backbone under
// backbone/, a random candidate head (head_dim 32), a byte-level BPE
// tokenizer, decision_config.json, calibration.json and score_bias.json bound
// to its identity, the config.json pointer and MODEL_MANIFEST.json.
void write_random_decision2(uint64_t seed, size_t max_length, const std::filesystem::path& dir);

}  // namespace semroute

// A prompt compressor from YAML: the router's `compression:` section and
// `semroute serve`'s `compressors.NAME` ({max_tokens, tokenizer, head_ratio,
// tail_ratio, drop_stop_words, languages}). Errors name `field`.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>

#include "classifiers/yaml_input.h"
#include "compression/prompt_compressor.h"

namespace semroute {

std::shared_ptr<const PromptCompressor> parse_compression(const YamlFields& f, const YAML::Node& node,
                                                          const std::string& field);

}  // namespace semroute

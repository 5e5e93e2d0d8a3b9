// Writing what training produced as Hugging Face and PEFT lay it out, so
// transformers, PEFT and every loader of semroute read it: a model directory
// (config.json with id2label, model.safetensors, tokenizer.json) or a LoRA
// adapter directory (adapter_config.json, adapter_model.safetensors with the
// head as modules_to_save, labels.json for the labels PEFT does not keep).
#pragma once

#include <c10/core/ScalarType.h>

#include <filesystem>
#include <string>

#include "training/trainable_modernbert.h"

namespace semroute::training {

// `storage`: the dtype the weights are written in (float32, float16, bfloat16).
void save_model(const TrainableModernBert& model, const std::filesystem::path& dir,
                const std::filesystem::path& tokenizer_json, c10::ScalarType storage);

// `base` is written as base_model_name_or_path (as given: a path or a hub name).
void save_adapter(const TrainableModernBert& model, const std::filesystem::path& dir, const std::string& base,
                  const std::filesystem::path& tokenizer_json);

}  // namespace semroute::training

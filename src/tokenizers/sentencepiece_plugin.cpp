// The SentencePiece plugin: a thin C wrapper over sentencepiece's processor,
// compiled into its own shared object (see sentencepiece_plugin.h for why).
#include "tokenizers/sentencepiece_plugin.h"

#include <sentencepiece_processor.h>

#include <cstring>
#include <string>
#include <vector>

struct srspm_model {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

void copy_message(const std::string& message, char* out, size_t size) {
  if (size == 0) return;
  const size_t n = message.size() < size - 1 ? message.size() : size - 1;
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
}

int64_t copy_out(const std::string& s, char* out, size_t size) {
  if (out != nullptr && s.size() <= size) std::memcpy(out, s.data(), s.size());
  return static_cast<int64_t>(s.size());
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) srspm_model* srspm_load(const char* data, size_t size, char* error,
                                                               size_t error_size) {
  try {
    auto* model = new srspm_model;
    const auto status = model->processor.LoadFromSerializedProto(std::string(data, size));
    if (!status.ok()) {
      copy_message(status.ToString(), error, error_size);
      delete model;
      return nullptr;
    }
    return model;
  } catch (const std::exception& e) {
    copy_message(e.what(), error, error_size);
    return nullptr;
  }
}

__attribute__((visibility("default"))) void srspm_free(srspm_model* model) { delete model; }

__attribute__((visibility("default"))) int64_t srspm_encode(const srspm_model* model, const char* text, size_t length,
                                                           int32_t* ids, uint32_t* begins, uint32_t* ends,
                                                           size_t capacity) {
  try {
    const auto spt = model->processor.EncodeAsImmutableProto(std::string(text, length));
    const size_t n = spt.pieces_size();
    for (size_t i = 0; i < n && i < capacity; ++i) {
      const auto& piece = spt.pieces(static_cast<int>(i));
      ids[i] = static_cast<int32_t>(piece.id());
      begins[i] = piece.begin();
      ends[i] = piece.end();
    }
    return static_cast<int64_t>(n);
  } catch (...) {
    return -1;
  }
}

__attribute__((visibility("default"))) int64_t srspm_decode(const srspm_model* model, const int32_t* ids, size_t count,
                                                           char* out, size_t size) {
  try {
    std::string text;
    if (!model->processor.Decode(std::vector<int>(ids, ids + count), &text).ok()) return -1;
    return copy_out(text, out, size);
  } catch (...) {
    return -1;
  }
}

__attribute__((visibility("default"))) int64_t srspm_id_to_piece(const srspm_model* model, int32_t id, char* out,
                                                                size_t size) {
  if (id < 0 || id >= model->processor.GetPieceSize()) return -1;
  return copy_out(model->processor.IdToPiece(id), out, size);
}

__attribute__((visibility("default"))) int32_t srspm_piece_to_id(const srspm_model* model, const char* piece,
                                                                size_t length) {
  const std::string p(piece, length);
  const int id = model->processor.PieceToId(p);
  // PieceToId answers unk_id for unknown pieces; only report real matches.
  return (id == model->processor.unk_id() && p != model->processor.IdToPiece(id)) ? -1 : id;
}

__attribute__((visibility("default"))) int32_t srspm_vocab_size(const srspm_model* model) {
  return model->processor.GetPieceSize();
}

__attribute__((visibility("default"))) int32_t srspm_special_id(const srspm_model* model, int which) {
  switch (which) {
    case 0: return model->processor.unk_id();
    case 1: return model->processor.bos_id();
    case 2: return model->processor.eos_id();
    case 3: return model->processor.pad_id();
    default: return -1;
  }
}

__attribute__((visibility("default"))) int srspm_is_control(const srspm_model* model, int32_t id) {
  return model->processor.IsControl(id) ? 1 : 0;
}

}  // extern "C"

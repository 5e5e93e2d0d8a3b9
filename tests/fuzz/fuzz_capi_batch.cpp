// Fuzz target: the C API's batch calls with any texts and offsets. The input
// is split into a header (count and offsets, reduced modulo the buffer so
// they stay inside it: the API cannot see a buffer's end) and the texts.
// Every call must return a status, never crash; answers must be finite.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_util.h"
#include "semroute/semroute.h"

namespace {

semroute_model* load(const char* dir) {
  semroute_model_params params = semroute_model_default_params();
  params.tokenizer = SEMROUTE_TEST_DATA "/tokenizers/tiny256";
  params.threads = 1;
  semroute_model* model = nullptr;
  if (semroute_model_load(dir, &params, &model) != nullptr) std::abort();  // the fuzz run needs its model
  return model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  semroute::fuzz::signal_handlers_on_own_stack();
  static semroute_model* classifier = load(SEMROUTE_TEST_DATA "/modernbert_seqcls_cls");
  static semroute_model* embedder = load(SEMROUTE_TEST_DATA "/qwen3_embedding");
  if (size < 1) return 0;
  const size_t count = data[0] % 9;  // 0..8 texts
  const size_t header = 1 + 2 * (count + 1);
  if (size < header) return 0;
  const char* texts = reinterpret_cast<const char*>(data + header);
  const size_t length = size - header;
  std::vector<uint64_t> offsets(count + 1);
  for (size_t i = 0; i <= count; ++i) offsets[i] = (data[1 + 2 * i] | (data[2 + 2 * i] << 8)) % (length + 1);

  semroute_classifications* results = nullptr;
  semroute_status* s = semroute_classify_batch(classifier, texts, offsets.data(), count, &results);
  if (s == nullptr) {
    for (size_t i = 0; i < semroute_classifications_count(results); ++i)
      if (!std::isfinite(semroute_classifications_confidence(results, i))) std::abort();
    semroute_classifications_free(results);
  }
  semroute_status_free(s);

  std::vector<float> out(count * semroute_model_embedding_dim(embedder) + 1);
  semroute_status_free(semroute_embed_batch(embedder, texts, offsets.data(), count, out.data(), out.size()));
  return 0;
}

#include "test_util.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>

#include "models/random_model.h"
#include "tokenizer_test_util.h"

namespace semroute::test {

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
  const char* before = std::getenv(name);
  was_set_ = before != nullptr;
  if (was_set_) before_ = before;
  if (value.empty())
    ::unsetenv(name);
  else
    ::setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (was_set_)
    ::setenv(name_.c_str(), before_.c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

std::shared_ptr<const Tokenizer> real_tokenizer(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Tokenizer>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[name];
  if (!slot) {
    for (const auto& t : real_tokenizers())
      if (t.name == name) {
        if (!std::filesystem::exists(t.file))
          throw std::runtime_error(t.file.string() + " is missing: run scripts/fetch-tokenizers.sh");
        slot = load_tokenizer(t.file);
      }
  }
  return slot;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() / ("semroute-test-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string safetensors_image(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string safetensors_f32(const std::vector<F32Tensor>& tensors) {
  std::string header = "{";
  std::string data;
  for (const auto& t : tensors) {
    const size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
    std::string shape;
    for (auto d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    header += (header.size() > 1 ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"F32\",\"shape\":[" +
              shape + "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
  }
  header += "}";
  // Pad the header with spaces so the data buffer starts 8-byte aligned, as writers do.
  while ((8 + header.size()) % 8 != 0) header += ' ';
  return safetensors_image(header, data);
}

std::filesystem::path copy_with_json_key(const std::filesystem::path& source, const std::filesystem::path& out,
                                         const std::string& file, const std::string& key, const nlohmann::json& value) {
  namespace fs = std::filesystem;
  fs::create_directories(out);
  for (const auto& entry : fs::directory_iterator(source))
    if (entry.path().filename() != file) fs::copy_file(entry.path(), out / entry.path().filename());
  nlohmann::json config = nlohmann::json::parse(std::ifstream(source / file));
  config[key] = value;
  write_file(out / file, config.dump(2));
  return out;
}

void write_intent_and_pii_models(const std::filesystem::path& dir) {
  RandomModelSpec spec;
  spec.tokenizer = data_dir() / "tokenizers/modernbert/tokenizer.json";
  spec.labels = {"math", "law", "other"};
  write_random_modernbert(spec, dir / "intent");
  spec.token_task = true;
  spec.labels = {"O", "B-EMAIL", "I-EMAIL", "B-PERSON", "I-PERSON"};
  spec.seed = 7;
  write_random_modernbert(spec, dir / "pii");
}

void write_hallucination_models(const std::filesystem::path& dir) {
  RandomModelSpec spec;
  spec.tokenizer = data_dir() / "tokenizers/modernbert/tokenizer.json";
  spec.token_task = true;
  spec.labels = {"SUPPORTED", "HALLUCINATED"};
  spec.label_bias = {0, 12};
  write_random_modernbert(spec, dir / "flags_all");
  spec.label_bias = {12, 0};
  write_random_modernbert(spec, dir / "flags_none");
  spec.label_bias = {};
  spec.seed = 3;
  write_random_modernbert(spec, dir / "random");
  spec.token_task = false;
  spec.labels = {"entailment", "neutral", "contradiction"};
  spec.label_bias = {0, 0, 12};
  write_random_modernbert(spec, dir / "nli_contradiction");
  spec.label_bias = {12, 0, 0};
  write_random_modernbert(spec, dir / "nli_entailment");
}

TempDir* IntentAndPiiModels::dir_ = nullptr;

void IntentAndPiiModels::SetUpTestSuite() {
  dir_ = new TempDir();
  write_intent_and_pii_models(dir_->path());
}

void IntentAndPiiModels::TearDownTestSuite() {
  delete dir_;
  dir_ = nullptr;
}

std::string IntentAndPiiModels::path(const char* name) { return (*dir_ / name).string(); }

}  // namespace semroute::test

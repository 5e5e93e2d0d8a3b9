#include "tokenizers/sentencepiece_tokenizer.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/file_input.h"
#include "core/sanitized.h"
#include "semroute/error.h"
#include "tokenizers/post_processors.h"
#include "tokenizers/sentencepiece_plugin.h"

namespace semroute {
namespace {

// The plugin's entry points, resolved once per process.
struct Plugin {
  decltype(&srspm_load) load;
  decltype(&srspm_free) free;
  decltype(&srspm_encode) encode;
  decltype(&srspm_decode) decode;
  decltype(&srspm_id_to_piece) id_to_piece;
  decltype(&srspm_piece_to_id) piece_to_id;
  decltype(&srspm_vocab_size) vocab_size;
  decltype(&srspm_special_id) special_id;
  decltype(&srspm_is_control) is_control;
};

std::vector<std::string> plugin_candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("SEMROUTE_SENTENCEPIECE_PLUGIN")) paths.push_back(env);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_candidates), &info) != 0 && info.dli_fname != nullptr) {
    const std::filesystem::path self(info.dli_fname);
    paths.push_back((self.parent_path() / "libsemroute_sentencepiece.so").string());
    paths.push_back((self.parent_path() / "semroute" / "libsemroute_sentencepiece.so").string());
  }
#ifdef SEMROUTE_SENTENCEPIECE_PLUGIN_PATH
  paths.push_back(SEMROUTE_SENTENCEPIECE_PLUGIN_PATH);
#endif
  return paths;
}

const Plugin& plugin() {
  static std::once_flag once;
  static Plugin p{};
  static std::string error;
  std::call_once(once, [] {
    if (kSanitizedBuild) {
      error = "SentencePiece models are not available in sanitizer builds (the plugin needs RTLD_DEEPBIND)";
      return;
    }
    void* handle = nullptr;
    std::string tried;
    for (const auto& path : plugin_candidates()) {
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (handle != nullptr) break;
      tried += "\n  " + path + ": " + dlerror();
    }
    if (handle == nullptr) {
      error = "cannot load the SentencePiece plugin libsemroute_sentencepiece.so (set SEMROUTE_SENTENCEPIECE_PLUGIN):" + tried;
      return;
    }
    const auto sym = [&](const char* name) { return dlsym(handle, name); };
    p.load = reinterpret_cast<decltype(p.load)>(sym("srspm_load"));
    p.free = reinterpret_cast<decltype(p.free)>(sym("srspm_free"));
    p.encode = reinterpret_cast<decltype(p.encode)>(sym("srspm_encode"));
    p.decode = reinterpret_cast<decltype(p.decode)>(sym("srspm_decode"));
    p.id_to_piece = reinterpret_cast<decltype(p.id_to_piece)>(sym("srspm_id_to_piece"));
    p.piece_to_id = reinterpret_cast<decltype(p.piece_to_id)>(sym("srspm_piece_to_id"));
    p.vocab_size = reinterpret_cast<decltype(p.vocab_size)>(sym("srspm_vocab_size"));
    p.special_id = reinterpret_cast<decltype(p.special_id)>(sym("srspm_special_id"));
    p.is_control = reinterpret_cast<decltype(p.is_control)>(sym("srspm_is_control"));
    if (!p.load || !p.free || !p.encode || !p.decode || !p.id_to_piece || !p.piece_to_id || !p.vocab_size ||
        !p.special_id || !p.is_control) {
      p.load = nullptr;
      error = "the SentencePiece plugin lacks expected functions";
    }
  });
  if (p.load == nullptr) throw Unsupported(error);
  return p;
}

// bos A (bos B): what SentencePiece-based checkpoints prepend.
class BosProcessor final : public PostProcessor {
 public:
  BosProcessor(int32_t bos, std::string token) : bos_(bos), token_(std::move(token)) {}
  size_t added_tokens(bool pair) const override { return pair ? 2 : 1; }
  Encoding process(Encoding first, std::optional<Encoding> second, bool add_special_tokens) const override {
    if (!add_special_tokens) return join_plain(std::move(first), std::move(second));
    Encoding out;
    out.push(bos_, token_, Span{}, -1, 0, true);
    Encoding joined = join_plain(std::move(first), std::nullopt);
    for (size_t i = 0; i < joined.size(); ++i) out.push(joined.ids[i], joined.tokens[i], joined.offsets[i], 0, 0, false);
    if (second) {
      out.push(bos_, token_, Span{}, -1, 1, true);
      for (size_t i = 0; i < second->size(); ++i)
        out.push(second->ids[i], second->tokens[i], second->offsets[i], 1, 1, false);
    }
    return out;
  }

 private:
  int32_t bos_;
  std::string token_;
};

class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(const Plugin& plugin, srspm_model* model) : plugin_(plugin), model_(model) {
    const int32_t bos = plugin_.special_id(model_, 1);
    if (bos >= 0) post_processor_ = std::make_shared<BosProcessor>(bos, id_to_token(bos));
    const int32_t pad = plugin_.special_id(model_, 3);
    pad_id_ = pad >= 0 ? pad : 0;
    pad_token_ = id_to_token(pad_id_);
  }
  ~SentencePieceTokenizer() override { plugin_.free(model_); }

  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const override {
    std::vector<int32_t> kept;
    for (int32_t id : ids) {
      if (id < 0 || id >= plugin_.vocab_size(model_))
        throw InvalidInput("token id " + std::to_string(id) + " is not in the vocabulary");
      if (!skip_special_tokens || !plugin_.is_control(model_, id)) kept.push_back(id);
    }
    std::string out(64, '\0');
    int64_t n = plugin_.decode(model_, kept.data(), kept.size(), out.data(), out.size());
    if (n > static_cast<int64_t>(out.size())) {
      out.resize(static_cast<size_t>(n));
      n = plugin_.decode(model_, kept.data(), kept.size(), out.data(), out.size());
    }
    if (n < 0) throw InternalError("SentencePiece failed to decode");
    out.resize(static_cast<size_t>(n));
    return out;
  }

  std::optional<int32_t> token_to_id(std::string_view token) const override {
    const int32_t id = plugin_.piece_to_id(model_, token.data(), token.size());
    return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
  }

  std::string id_to_token(int32_t id) const override {
    std::string out(32, '\0');
    int64_t n = plugin_.id_to_piece(model_, id, out.data(), out.size());
    if (n > static_cast<int64_t>(out.size())) {
      out.resize(static_cast<size_t>(n));
      n = plugin_.id_to_piece(model_, id, out.data(), out.size());
    }
    if (n < 0) return {};
    out.resize(static_cast<size_t>(n));
    return out;
  }

  size_t vocab_size() const override { return static_cast<size_t>(plugin_.vocab_size(model_)); }

 protected:
  Encoding encode_text(std::string_view text) const override {
    size_t capacity = text.size() + 16;
    std::vector<int32_t> ids(capacity);
    std::vector<uint32_t> begins(capacity), ends(capacity);
    int64_t n = plugin_.encode(model_, text.data(), text.size(), ids.data(), begins.data(), ends.data(), capacity);
    if (n > static_cast<int64_t>(capacity)) {
      capacity = static_cast<size_t>(n);
      ids.resize(capacity), begins.resize(capacity), ends.resize(capacity);
      n = plugin_.encode(model_, text.data(), text.size(), ids.data(), begins.data(), ends.data(), capacity);
    }
    if (n < 0) throw InternalError("SentencePiece failed to encode");
    Encoding out;
    for (int64_t i = 0; i < n; ++i) out.push(ids[i], id_to_token(ids[i]), Span{begins[i], ends[i]}, 0, 0, false);
    return out;
  }

 private:
  const Plugin& plugin_;
  srspm_model* model_;
};

}  // namespace

std::shared_ptr<const Tokenizer> load_sentencepiece_tokenizer(const std::filesystem::path& model_file) {
  const std::string bytes = read_file(model_file, kMaxTokenizerFileBytes);  // file checks first, in every build
  const Plugin& p = plugin();
  char error[512] = {};
  srspm_model* model = p.load(bytes.data(), bytes.size(), error, sizeof(error));
  if (model == nullptr) throw LoadError(model_file.string() + ": cannot load SentencePiece model: " + error);
  return std::make_shared<SentencePieceTokenizer>(p, model);
}

}  // namespace semroute

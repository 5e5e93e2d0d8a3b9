// Byte-pair encoding as Hugging Face tokenizers defines it: merges applied in
// rank order (lowest first, leftmost on ties), `ignore_merges` whole-word
// lookup, `byte_fallback` to <0xNN> tokens, `unk_token` with `fuse_unk`,
// continuing-subword prefix and end-of-word suffix. Merging uses a heap over
// a linked list of symbols, so a long word costs O(n log n), not O(n²).
#include <atomic>
#include <cstdio>
#include <queue>

#include "semroute/error.h"
#include "tokenizers/models.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

using nlohmann::json;

std::string optional_string(const json& spec, const char* key) {
  const auto it = spec.find(key);
  return (it == spec.end() || it->is_null()) ? std::string() : it->get<std::string>();
}

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

class BpeModel final : public TokenizerModel {
 public:
  explicit BpeModel(const json& spec) {
    load_vocab(spec.at("vocab"));
    unk_token_ = optional_string(spec, "unk_token");
    prefix_ = optional_string(spec, "continuing_subword_prefix");
    suffix_ = optional_string(spec, "end_of_word_suffix");
    fuse_unk_ = spec.value("fuse_unk", false);
    byte_fallback_ = spec.value("byte_fallback", false);
    ignore_merges_ = spec.value("ignore_merges", false);
    if (spec.contains("dropout") && !spec.at("dropout").is_null() && spec.at("dropout").get<double>() > 0)
      throw Unsupported("tokenizer.json: BPE dropout is a training option and is not supported");
    load_merges(spec.at("merges"));
    if (!unk_token_.empty()) {
      const auto unk = token_to_id(unk_token_);
      if (!unk) throw LoadError("tokenizer.json: BPE unk_token '" + unk_token_ + "' is not in the vocabulary");
      unk_id_ = *unk;
    }
    if (byte_fallback_) {
      for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>", b);
        const auto id = token_to_id(name);
        byte_ids_[b] = id ? *id : -1;
      }
    }
  }

  void tokenize(std::string_view word, std::vector<ModelToken>& out) const override {
    if (word.empty()) return;
    // Natural text repeats its words: short words are memoized per thread.
    if (word.size() <= kMaxCachedWord) {
      WordCache& cache = thread_cache();
      const auto hit = cache.tokens.find(std::string(word));
      if (hit != cache.tokens.end()) {
        out.insert(out.end(), hit->second.begin(), hit->second.end());
        return;
      }
      const size_t first = out.size();
      tokenize_uncached(word, out);
      if (cache.tokens.size() >= kMaxCacheEntries) cache.tokens.clear();
      cache.tokens.emplace(std::string(word), std::vector<ModelToken>(out.begin() + static_cast<long>(first), out.end()));
      return;
    }
    tokenize_uncached(word, out);
  }

 private:
  static constexpr size_t kMaxCachedWord = 64;
  static constexpr size_t kMaxCacheEntries = 1 << 16;

  // One cache per thread and model. Keyed by a process-unique model number,
  // never by address, so a new model at a freed address starts empty.
  struct WordCache {
    uint64_t owner = 0;
    std::unordered_map<std::string, std::vector<ModelToken>> tokens;
  };
  WordCache& thread_cache() const {
    thread_local std::unordered_map<uint64_t, WordCache> caches;
    WordCache& cache = caches[instance_];
    if (caches.size() > 16) {  // bound the number of models a thread remembers
      WordCache keep = std::move(cache);
      caches.clear();
      return caches[instance_] = std::move(keep);
    }
    return cache;
  }

  void tokenize_uncached(std::string_view word, std::vector<ModelToken>& out) const {
    if (ignore_merges_) {
      if (const auto id = token_to_id(word)) {
        out.push_back({*id, 0, static_cast<uint32_t>(word.size())});
        return;
      }
    }
    std::vector<Symbol> symbols = initial_symbols(word);
    merge(symbols);
    for (int i = 0; i != -1 && i < static_cast<int>(symbols.size()); i = symbols[i].next) {
      if (symbols[i].len == 0) continue;
      out.push_back({symbols[i].id, symbols[i].begin, symbols[i].begin + symbols[i].len});
    }
  }

  struct Symbol {
    int32_t id;
    uint32_t begin, len;
    int prev, next;
  };

  void load_merges(const json& merges) {
    int32_t rank = 0;
    for (const auto& m : merges) {
      std::string left, right;
      if (m.is_string()) {  // "a b"
        const std::string s = m.get<std::string>();
        const size_t space = s.find(' ', 1);
        if (space == std::string::npos) throw LoadError("tokenizer.json: malformed merge '" + s + "'");
        left = s.substr(0, space);
        right = s.substr(space + 1);
      } else if (m.is_array() && m.size() == 2) {  // ["a", "b"]
        left = m[0].get<std::string>();
        right = m[1].get<std::string>();
      } else {
        throw LoadError("tokenizer.json: malformed merge entry " + m.dump());
      }
      const auto a = token_to_id(left), b = token_to_id(right);
      std::string merged = left + (prefix_.empty() ? right : right.substr(std::min(prefix_.size(), right.size())));
      if (!prefix_.empty() && right.compare(0, prefix_.size(), prefix_) != 0) merged = left + right;
      const auto c = token_to_id(merged);
      if (!a || !b || !c)
        throw LoadError("tokenizer.json: merge '" + left + " " + right + "' uses tokens missing from the vocabulary");
      merges_.emplace(pair_key(*a, *b), std::make_pair(rank++, *c));
    }
  }

  // One symbol per character (with prefix/suffix as HF applies them);
  // unknown characters become byte-fallback tokens or unk.
  std::vector<Symbol> initial_symbols(std::string_view word) const {
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    std::string key;
    for (size_t i = 0; i < word.size();) {
      size_t len;
      unicode::decode(word, i, &len);
      if (i + len > word.size()) len = word.size() - i;
      key.assign(i == 0 ? "" : prefix_);
      key.append(word.substr(i, len));
      if (i + len == word.size()) key += suffix_;
      if (const auto id = token_to_id(key)) {
        push(symbols, *id, i, len);
      } else if (byte_fallback_ && all_bytes_known(word.substr(i, len))) {
        for (size_t k = 0; k < len; ++k) push(symbols, byte_ids_[static_cast<unsigned char>(word[i + k])], i + k, 1);
      } else if (unk_id_ >= 0) {
        if (fuse_unk_ && !symbols.empty() && symbols.back().id == unk_id_) {
          symbols.back().len += static_cast<uint32_t>(len);
        } else {
          push(symbols, unk_id_, i, len);
        }
      } else {
        throw InvalidInput("tokenizer: character at byte " + std::to_string(i) +
                           " is not in the vocabulary and the model has no unk_token");
      }
      i += len;
    }
    return symbols;
  }

  bool all_bytes_known(std::string_view bytes) const {
    for (unsigned char c : bytes)
      if (byte_ids_[c] < 0) return false;
    return true;
  }

  static void push(std::vector<Symbol>& symbols, int32_t id, size_t begin, size_t len) {
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, static_cast<uint32_t>(begin), static_cast<uint32_t>(len), index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
  }

  void merge(std::vector<Symbol>& symbols) const {
    struct Candidate {
      int32_t rank;
      int pos;
      int32_t left, right, merged;
      bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
    const auto consider = [&](int pos) {
      const int next = symbols[pos].next;
      if (next < 0) return;
      const auto it = merges_.find(pair_key(symbols[pos].id, symbols[next].id));
      if (it != merges_.end())
        queue.push({it->second.first, pos, symbols[pos].id, symbols[next].id, it->second.second});
    };
    for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);
    while (!queue.empty()) {
      const Candidate c = queue.top();
      queue.pop();
      Symbol& left = symbols[c.pos];
      // Stale entries: one side was merged away or changed since it was queued.
      if (left.len == 0 || left.id != c.left || left.next < 0) continue;
      Symbol& right = symbols[left.next];
      if (right.id != c.right) continue;
      left.id = c.merged;
      left.len += right.len;
      right.len = 0;
      left.next = right.next;
      if (left.next >= 0) symbols[left.next].prev = c.pos;
      if (left.prev >= 0) consider(left.prev);
      consider(c.pos);
    }
  }

  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (a, b) -> (rank, merged id)
  std::string unk_token_, prefix_, suffix_;
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  int32_t byte_ids_[256] = {};
  const uint64_t instance_ = next_instance();

  static uint64_t next_instance() {
    static std::atomic<uint64_t> counter{0};
    return ++counter;
  }
};

}  // namespace

std::unique_ptr<TokenizerModel> make_bpe_model(const json& spec) { return std::make_unique<BpeModel>(spec); }

}  // namespace semroute

#include "router/builtin_signals.h"

#include "compression/prompt_compressor.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "classifiers/intent_index.h"
#include "classifiers/unified_classifier.h"
#include "core/regex.h"
#include "router/semantic_cache.h"
#include "semroute/error.h"
#include "tasks/embedder.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "tokenizers/tokenizer.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

class ClassifierSignal final : public Signal {
 public:
  ClassifierSignal(const std::string& name, std::shared_ptr<const SequenceClassifier> model,
                   std::vector<std::string> positive_labels, double threshold)
      : Signal(name), model_(std::move(model)), positive_(std::move(positive_labels)), threshold_(threshold) {
    for (const auto& label : positive_)
      if (std::find(labels().begin(), labels().end(), label) == labels().end())
        throw LoadError("signals." + name + ".positive_labels: '" + label + "' is not a label of the model (" +
                        join(labels()) + ")");
  }

  int cost() const override { return kCostModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty()) return FieldSpec{FieldType::kLabel, labels()};
    if (field == "confidence") return FieldSpec{FieldType::kNumber, {}};
    if (!positive_.empty() && field == "risk") return FieldSpec{FieldType::kNumber, {}};
    if (!positive_.empty() && field == "flagged") return FieldSpec{FieldType::kBool, {}};
    if (std::find(labels().begin(), labels().end(), field) != labels().end()) return FieldSpec{FieldType::kNumber, {}};
    return std::nullopt;
  }
  SignalValues compute(const RouteInput& input) const override {
    const Classification c = model_->classify({input.text}).at(0);
    SignalValues v{{"", FieldValue::of_label(c.label, c.confidence)}, {"confidence", FieldValue::of_number(c.confidence)}};
    double risk = 0;
    for (size_t i = 0; i < labels().size(); ++i) {
      v[labels()[i]] = FieldValue::of_number(c.probabilities[i]);
      if (std::find(positive_.begin(), positive_.end(), labels()[i]) != positive_.end()) risk += c.probabilities[i];
    }
    if (!positive_.empty()) {
      v["risk"] = FieldValue::of_number(risk);
      v["flagged"] = FieldValue::boolean(risk >= threshold_);
    }
    return v;
  }
  std::string describe_fields() const override {
    return std::string("fields: confidence") + (positive_.empty() ? "" : ", risk, flagged") + ", or a label's probability: " +
           join(labels());
  }

 private:
  const std::vector<std::string>& labels() const { return model_->labels(); }

  std::shared_ptr<const SequenceClassifier> model_;
  std::vector<std::string> positive_;
  double threshold_;
};

// The entity types of BIO labels ("B-EMAIL", "I-EMAIL" -> "EMAIL"; "O" has none).
std::vector<std::string> entity_types(const std::vector<std::string>& labels) {
  std::set<std::string> types;
  for (const auto& label : labels) {
    if (label == "O") continue;
    const bool prefixed = label.size() > 2 && (label[0] == 'B' || label[0] == 'I' || label[0] == 'E' || label[0] == 'S') &&
                          label[1] == '-';
    types.insert(prefixed ? label.substr(2) : label);
  }
  return {types.begin(), types.end()};
}

class EntitiesSignal final : public Signal {
 public:
  EntitiesSignal(const std::string& name, std::shared_ptr<const TokenClassifier> model, double threshold)
      : Signal(name), model_(std::move(model)), types_(entity_types(model_->labels())), threshold_(threshold) {}

  int cost() const override { return kCostModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty()) return FieldSpec{FieldType::kLabelSet, types_};
    if (field == "count") return FieldSpec{FieldType::kNumber, {}};
    return std::nullopt;
  }
  SignalValues compute(const RouteInput& input) const override {
    const TokenClassification result = model_->classify({input.text}).at(0);
    std::set<std::string> found;
    int count = 0;
    for (const auto& entity : result.entities) {
      if (entity.score < threshold_) continue;
      found.insert(entity.type);
      ++count;
    }
    return {{"", FieldValue::of_labels({found.begin(), found.end()})}, {"count", FieldValue::of_number(count)}};
  }
  std::string describe_fields() const override { return "fields: count; the value is a set of: " + join(types_); }

 private:
  std::shared_ptr<const TokenClassifier> model_;
  std::vector<std::string> types_;
  double threshold_;
};

// PCRE2 quoting of a literal: \Q…\E, with any \E inside split out.
std::string quote(const std::string& literal) {
  std::string out = "\\Q";
  for (size_t i = 0; i < literal.size(); ++i) {
    if (literal.compare(i, 2, "\\E") == 0) {
      out += "\\E\\\\E\\Q";
      ++i;
    } else {
      out += literal[i];
    }
  }
  return out + "\\E";
}

class KeywordsSignal final : public Signal {
 public:
  KeywordsSignal(const std::string& name, const std::vector<std::string>& patterns, bool regex, bool case_sensitive)
      : Signal(name), keywords_(patterns) {
    if (patterns.empty()) throw LoadError("signals." + name + ": no keywords");
    for (const auto& p : patterns) {
      if (p.empty()) throw LoadError("signals." + name + ": an empty keyword");
      // Whole words for literals: \b where the keyword starts / ends with a word character.
      const std::string body = regex ? p : quote(p);
      const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
      const std::string pattern = std::string(case_sensitive ? "" : "(?i)") +
                                  (!regex && word(p.front()) ? "\\b" : "") + "(?:" + body + ")" +
                                  (!regex && word(p.back()) ? "\\b" : "");
      regexes_.push_back(std::make_unique<Regex>(pattern, Regex::Dialect::kPcre, "signals." + name + " keyword '" + p + "'"));
    }
  }

  int cost() const override { return kCostNoModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty()) return FieldSpec{FieldType::kBool, {}};
    if (field == "count") return FieldSpec{FieldType::kNumber, {}};
    if (field == "matches") return FieldSpec{FieldType::kLabelSet, keywords_};
    return std::nullopt;
  }
  SignalValues compute(const RouteInput& input) const override {
    std::vector<std::string> matched;
    for (size_t i = 0; i < regexes_.size(); ++i) {
      bool found = false;
      regexes_[i]->for_each_match(input.text, [&](size_t, size_t) { found = true; });
      if (found) matched.push_back(keywords_[i]);
    }
    const auto count = static_cast<double>(matched.size());
    return {{"", FieldValue::boolean(!matched.empty())},
            {"count", FieldValue::of_number(count)},
            {"matches", FieldValue::of_labels(std::move(matched))}};
  }
  std::string describe_fields() const override { return "fields: count, matches"; }

 private:
  std::vector<std::string> keywords_;
  std::vector<std::unique_ptr<Regex>> regexes_;
};

class LengthSignal final : public Signal {
 public:
  LengthSignal(const std::string& name, std::shared_ptr<const Tokenizer> tokenizer)
      : Signal(name), tokenizer_(std::move(tokenizer)) {}

  // Counting tokens runs a tokenizer; characters are a scan.
  int cost() const override { return tokenizer_ ? kCostTokenizer : kCostNoModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty() || field == "bytes" || (field == "tokens" && tokenizer_)) return FieldSpec{FieldType::kNumber, {}};
    return std::nullopt;
  }
  SignalValues compute(const RouteInput& input) const override {
    size_t characters = 0;
    for (const char c : input.text) characters += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    SignalValues v{{"", FieldValue::of_number(static_cast<double>(characters))},
                   {"bytes", FieldValue::of_number(static_cast<double>(input.text.size()))}};
    if (tokenizer_) v["tokens"] = FieldValue::of_number(static_cast<double>(tokenizer_->encode(input.text).ids.size()));
    return v;
  }
  std::string describe_fields() const override {
    return tokenizer_ ? "fields: bytes, tokens" : "fields: bytes (tokens needs 'tokenizer:')";
  }

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
};

const std::vector<std::string> kScripts = {"latin", "cyrillic", "greek", "arabic", "hebrew", "devanagari",
                                           "han",   "kana",     "hangul", "thai", "other", "none"};

// The script of a letter by its block (enough to tell scripts apart; marks,
// digits and punctuation count for none).
const char* script_of(char32_t cp) {
  if ((cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || (cp >= 0xC0 && cp <= 0x24F && cp != 0xD7 && cp != 0xF7) ||
      (cp >= 0x1E00 && cp <= 0x1EFF))
    return "latin";
  if (cp >= 0x370 && cp <= 0x3FF) return "greek";
  if (cp >= 0x400 && cp <= 0x52F) return "cyrillic";
  if (cp >= 0x5D0 && cp <= 0x5EA) return "hebrew";
  if ((cp >= 0x620 && cp <= 0x64A) || (cp >= 0x671 && cp <= 0x6D3)) return "arabic";
  if (cp >= 0x904 && cp <= 0x939) return "devanagari";
  if (cp >= 0xE01 && cp <= 0xE2E) return "thai";
  if ((cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30A1 && cp <= 0x30FA)) return "kana";
  if ((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF)) return "han";
  if (cp >= 0xAC00 && cp <= 0xD7A3) return "hangul";
  if (cp < 0x80) return nullptr;  // digits, punctuation, space
  return "other";
}

class ScriptSignal final : public Signal {
 public:
  explicit ScriptSignal(const std::string& name) : Signal(name) {}
  int cost() const override { return kCostNoModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty()) return FieldSpec{FieldType::kLabel, kScripts};
    return std::nullopt;
  }
  SignalValues compute(const RouteInput& input) const override {
    std::map<std::string, size_t> letters;
    for (size_t pos = 0; pos < input.text.size();) {
      size_t length = 1;
      const char32_t cp = unicode::decode(input.text, pos, &length);
      if (const char* script = script_of(cp)) ++letters[script];
      pos += length;
    }
    std::string best = "none";
    size_t most = 0;
    for (const auto& [script, count] : letters)
      if (count > most) best = script, most = count;
    return {{"", FieldValue::of_label(best)}};
  }
  std::string describe_fields() const override { return "the value only: " + join(kScripts); }
};

class MetadataSignal final : public Signal {
 public:
  explicit MetadataSignal(const std::string& name) : Signal(name) {}
  int cost() const override { return kCostNoModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty()) return std::nullopt;
    return FieldSpec{FieldType::kLabel, {}};
  }
  SignalValues compute(const RouteInput& input) const override {
    SignalValues v;
    for (const auto& [key, value] : input.metadata) v[key] = FieldValue::of_label(value);
    return v;
  }
  std::string describe_fields() const override { return "any key of the request's metadata: " + name() + ".<key>"; }
};

class CacheSignal final : public Signal {
 public:
  CacheSignal(const std::string& name, std::shared_ptr<const Embedder> embedder, std::shared_ptr<SemanticCache> cache)
      : Signal(name), embedder_(std::move(embedder)), cache_(std::move(cache)) {}
  int cost() const override { return kCostModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty()) return FieldSpec{FieldType::kBool, {}};
    if (field == "similarity") return FieldSpec{FieldType::kNumber, {}};
    return std::nullopt;
  }
  SignalValues compute(const RouteInput& input) const override {
    const auto hit = cache_->lookup("", *prompt_embedding(input, *embedder_));
    return {{"", FieldValue::boolean(hit.has_value())}, {"similarity", FieldValue::of_number(hit ? hit->similarity : 0)}};
  }
  std::string describe_fields() const override { return "fields: similarity"; }

 private:
  std::shared_ptr<const Embedder> embedder_;
  std::shared_ptr<SemanticCache> cache_;
};

class IntentsSignal final : public Signal {
 public:
  IntentsSignal(const std::string& name, std::shared_ptr<const Embedder> embedder, const IntentSet& set)
      : Signal(name), embedder_(embedder), index_(embedder, set) {
    labels_ = index_.intent_names();
    if (std::find(labels_.begin(), labels_.end(), "none") != labels_.end())
      throw LoadError("signals." + name + ": 'none' is the value when no intent matches; name the intent otherwise");
    labels_.push_back("none");
  }
  int cost() const override { return kCostModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty()) return FieldSpec{FieldType::kLabel, labels_};
    if (field == "score" || field == "margin") return FieldSpec{FieldType::kNumber, {}};
    if (field != "none" && std::find(labels_.begin(), labels_.end(), field) != labels_.end())
      return FieldSpec{FieldType::kNumber, {}};
    return std::nullopt;
  }
  SignalValues compute(const RouteInput& input) const override {
    const auto embedding = prompt_embedding(input, *embedder_);
    const IntentMatch m = index_.match_vector(embedding->data(), static_cast<int64_t>(embedding->size()));
    SignalValues v{{"", FieldValue::of_label(m.intent.empty() ? "none" : m.intent, m.intent.empty() ? 1.0 : m.score)},
                   {"score", FieldValue::of_number(m.score)},
                   {"margin", FieldValue::of_number(m.margin)}};
    for (const auto& [intent, score] : m.scores) v[intent] = FieldValue::of_number(score);
    return v;
  }
  std::string describe_fields() const override {
    return "fields: score, margin, or an intent's score: " + join(index_.intent_names());
  }

 private:
  std::shared_ptr<const Embedder> embedder_;
  IntentIndex index_;
  std::vector<std::string> labels_;
};

// Every task of a unified classifier in one call (the LoRA tasks in one
// multi-task engine pass over their shared base): fields "<task>" and
// "<task>.<field>", as the classifier and entities signals name theirs.
class UnifiedSignal final : public Signal {
 public:
  UnifiedSignal(const std::string& name, std::shared_ptr<const UnifiedClassifier> unified)
      : Signal(name), unified_(std::move(unified)) {
    for (const auto& task : unified_->config().tasks) {
      const auto& labels = unified_->labels(task.name);
      if (task.kind == TaskKind::kToken) {
        specs_[task.name] = {FieldType::kLabelSet, entity_types(labels)};
        specs_[task.name + ".count"] = {FieldType::kNumber, {}};
        continue;
      }
      specs_[task.name] = {FieldType::kLabel, labels};
      specs_[task.name + ".confidence"] = {FieldType::kNumber, {}};
      if (!task.positive_labels.empty()) {
        specs_[task.name + ".risk"] = {FieldType::kNumber, {}};
        specs_[task.name + ".flagged"] = {FieldType::kBool, {}};
      }
      for (const auto& label : labels) specs_[task.name + "." + label] = {FieldType::kNumber, {}};
    }
  }
  int cost() const override { return kCostModel; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    const auto it = specs_.find(field);
    if (it == specs_.end()) return std::nullopt;
    return it->second;
  }
  SignalValues compute(const RouteInput& input) const override {
    const UnifiedResult result = unified_->classify({input.text}).at(0);
    SignalValues v;
    for (const auto& a : result.answers) {
      if (!a.error.empty()) throw Error(a.error_code, "signal " + name() + ", task " + a.task + ": " + a.error);
      if (a.kind == TaskKind::kToken) {
        std::set<std::string> types;
        for (const auto& e : a.entities) types.insert(e.type);
        v[a.task] = FieldValue::of_labels({types.begin(), types.end()});
        v[a.task + ".count"] = FieldValue::of_number(static_cast<double>(a.entities.size()));
        continue;
      }
      const Classification& c = a.classification;
      v[a.task] = FieldValue::of_label(c.label, c.confidence);
      v[a.task + ".confidence"] = FieldValue::of_number(c.confidence);
      if (specs_.count(a.task + ".risk")) {
        v[a.task + ".risk"] = FieldValue::of_number(a.risk);
        v[a.task + ".flagged"] = FieldValue::boolean(a.flagged);
      }
      const auto& labels = unified_->labels(a.task);
      for (size_t i = 0; i < labels.size() && i < c.probabilities.size(); ++i)
        v[a.task + "." + labels[i]] = FieldValue::of_number(c.probabilities[i]);
    }
    return v;
  }
  std::string describe_fields() const override {
    std::vector<std::string> tasks;
    for (const auto& task : unified_->config().tasks) tasks.push_back(task.name);
    return "fields: a task (" + join(tasks) + "), or <task>.confidence / .risk / .flagged / .<label> / .count";
  }

 private:
  std::shared_ptr<const UnifiedClassifier> unified_;
  std::map<std::string, FieldSpec> specs_;
};

// Runs the signal on a thread of its own and waits at most the budget: past
// it the request goes on without the signal while the computation finishes
// in the background. (Not on TBB's threads: those are few and shared with
// the host program, and a computation past its budget would hold one.)
// Computations past their budgets are counted; while kMaxOverdue of them
// still run, the signal is not started again and times out at once, so a
// model that has stalled cannot pile up threads.
class BudgetedSignal final : public Signal {
 public:
  static constexpr int kMaxOverdue = 16;

  BudgetedSignal(std::shared_ptr<const Signal> inner, std::chrono::milliseconds budget)
      : Signal(inner->name()), inner_(std::move(inner)), budget_(budget) {}
  int cost() const override { return inner_->cost(); }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field == "timed_out") return FieldSpec{FieldType::kBool, {}};
    return inner_->field(field);
  }
  SignalValues compute(const RouteInput& input) const override {
    if (overdue_->load() >= kMaxOverdue) return timed_out();
    // The state outlives this call when the budget runs out first.
    struct State {
      std::mutex mutex;
      std::condition_variable done_cv;
      bool done = false;
      bool overdue = false;
      SignalValues values;
      std::exception_ptr error;
    };
    auto state = std::make_shared<State>();
    std::thread([state, overdue = overdue_, inner = inner_, copy = input.copy()] {
      SignalValues values;
      std::exception_ptr error;
      try {
        values = inner->compute(copy);
      } catch (...) {
        error = std::current_exception();
      }
      const std::lock_guard<std::mutex> lock(state->mutex);
      if (state->overdue) --*overdue;
      state->values = std::move(values);
      state->error = error;
      state->done = true;
      state->done_cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> lock(state->mutex);
    if (!state->done_cv.wait_for(lock, budget_, [&] { return state->done; })) {
      state->overdue = true;
      ++*overdue_;
      return timed_out();
    }
    if (state->error) std::rethrow_exception(state->error);
    SignalValues values = std::move(state->values);
    values["timed_out"] = FieldValue::boolean(false);
    return values;
  }
  std::string describe_fields() const override { return inner_->describe_fields() + ", timed_out"; }

 private:
  static SignalValues timed_out() { return {{"timed_out", FieldValue::boolean(true)}}; }

  std::shared_ptr<const Signal> inner_;
  std::chrono::milliseconds budget_;
  std::shared_ptr<std::atomic<int>> overdue_ = std::make_shared<std::atomic<int>>(0);
};

// Computes the inner signal on the prompt's skeleton.
class SkeletonSignal final : public Signal {
 public:
  explicit SkeletonSignal(std::shared_ptr<const Signal> inner) : Signal(inner->name()), inner_(std::move(inner)) {}
  int cost() const override { return inner_->cost(); }
  std::optional<FieldSpec> field(const std::string& field) const override { return inner_->field(field); }
  SignalValues compute(const RouteInput& input) const override {
    return inner_->compute(RouteInput{input.compressed().text, input.metadata, {}, nullptr, nullptr});
  }
  std::string describe_fields() const override { return inner_->describe_fields(); }

 private:
  std::shared_ptr<const Signal> inner_;
};

// Whether and how much the prompt was compressed for the signals that read its skeleton.
class CompressionSignal final : public Signal {
 public:
  using Signal::Signal;
  int cost() const override { return kCostTokenizer; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    if (field.empty()) return FieldSpec{FieldType::kBool, {}};
    if (field == "tokens" || field == "ratio") return FieldSpec{FieldType::kNumber, {}};
    return std::nullopt;
  }
  SignalValues compute(const RouteInput& input) const override {
    const CompressedText& c = input.compressed();
    const double ratio =
        input.text.empty() ? 1.0 : static_cast<double>(c.text.size()) / static_cast<double>(input.text.size());
    return {{"", FieldValue::boolean(c.compressed)},
            {"tokens", FieldValue::of_number(static_cast<double>(c.tokens))},
            {"ratio", FieldValue::of_number(ratio)}};
  }
  std::string describe_fields() const override { return "tokens, ratio"; }
};

}  // namespace

std::shared_ptr<const Signal> on_skeleton(std::shared_ptr<const Signal> signal) {
  return std::make_shared<SkeletonSignal>(std::move(signal));
}

std::shared_ptr<const Signal> compression_signal(const std::string& name) {
  return std::make_shared<CompressionSignal>(name);
}

std::shared_ptr<const Signal> with_budget(std::shared_ptr<const Signal> signal, std::chrono::milliseconds budget) {
  return std::make_shared<BudgetedSignal>(std::move(signal), budget);
}

std::shared_ptr<const Signal> unified_signal(const std::string& name, std::shared_ptr<const UnifiedClassifier> unified) {
  return std::make_shared<UnifiedSignal>(name, std::move(unified));
}

std::shared_ptr<const Signal> intents_signal(const std::string& name, std::shared_ptr<const Embedder> embedder,
                                             const IntentSet& set) {
  return std::make_shared<IntentsSignal>(name, std::move(embedder), set);
}

std::shared_ptr<const std::vector<float>> prompt_embedding(const RouteInput& input, const Embedder& embedder) {
  auto& slot = input.embeddings[&embedder];
  if (!slot) slot = std::make_shared<const std::vector<float>>(embedder.embed_rows({input.text}));
  return slot;
}

std::shared_ptr<const Signal> cache_signal(const std::string& name, std::shared_ptr<const Embedder> embedder,
                                           std::shared_ptr<SemanticCache> cache) {
  return std::make_shared<CacheSignal>(name, std::move(embedder), std::move(cache));
}

std::shared_ptr<const Signal> classifier_signal(const std::string& name, std::shared_ptr<const SequenceClassifier> model,
                                                std::vector<std::string> positive_labels, double threshold) {
  return std::make_shared<ClassifierSignal>(name, std::move(model), std::move(positive_labels), threshold);
}

std::shared_ptr<const Signal> entities_signal(const std::string& name, std::shared_ptr<const TokenClassifier> model,
                                              double threshold) {
  return std::make_shared<EntitiesSignal>(name, std::move(model), threshold);
}

std::shared_ptr<const Signal> keywords_signal(const std::string& name, const std::vector<std::string>& patterns,
                                              bool regex, bool case_sensitive) {
  return std::make_shared<KeywordsSignal>(name, patterns, regex, case_sensitive);
}

std::shared_ptr<const Signal> length_signal(const std::string& name, std::shared_ptr<const Tokenizer> tokenizer) {
  return std::make_shared<LengthSignal>(name, std::move(tokenizer));
}

std::shared_ptr<const Signal> script_signal(const std::string& name) { return std::make_shared<ScriptSignal>(name); }

std::shared_ptr<const Signal> metadata_signal(const std::string& name) {
  return std::make_shared<MetadataSignal>(name);
}

}  // namespace semroute

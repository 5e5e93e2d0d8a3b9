#include "training/training_data.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute::training {
namespace {

using nlohmann::json;

[[noreturn]] void bad_line(const std::filesystem::path& path, size_t line, const std::string& why) {
  throw InvalidInput(path.string() + ":" + std::to_string(line) + ": " + why);
}

std::vector<LabeledSpan> read_spans(const json& row, size_t text_size, const std::filesystem::path& path,
                                    size_t line) {
  const auto it = row.find("spans");
  if (it == row.end() || !it->is_array()) bad_line(path, line, "\"spans\" must be an array");
  std::vector<LabeledSpan> spans;
  for (const json& s : *it) {
    if (!s.is_object() || !s.contains("start") || !s.contains("end") || !s.contains("label") ||
        !s["start"].is_number_unsigned() || !s["end"].is_number_unsigned() || !s["label"].is_string())
      bad_line(path, line, "a span needs unsigned \"start\", \"end\" and a string \"label\"");
    LabeledSpan span{s["start"].get<size_t>(), s["end"].get<size_t>(), s["label"].get<std::string>()};
    if (span.begin >= span.end || span.end > text_size)
      bad_line(path, line, "span [" + std::to_string(span.begin) + ", " + std::to_string(span.end) +
                               ") is empty or outside the text's " + std::to_string(text_size) + " bytes");
    if (span.label.empty() || span.label == "O") bad_line(path, line, "a span's label must name an entity type");
    spans.push_back(std::move(span));
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].begin < spans[i - 1].end) bad_line(path, line, "spans overlap");
  return spans;
}

Example read_row(const std::string& text_line, Objective kind, const std::filesystem::path& path, size_t line) {
  check_json_nesting(text_line, path.string() + ":" + std::to_string(line));
  const json row = json::parse(text_line, nullptr, /*allow_exceptions=*/false);
  if (!row.is_object()) bad_line(path, line, "not a JSON object");
  const auto text = row.find("text");
  if (text == row.end() || !text->is_string()) bad_line(path, line, "\"text\" must be a string");
  Example example;
  example.text = text->get<std::string>();
  if (example.text.empty()) bad_line(path, line, "empty \"text\"");
  if (kind == Objective::kSequence) {
    const auto label = row.find("label");
    if (label == row.end() || !label->is_string() || label->get<std::string>().empty())
      bad_line(path, line, "\"label\" must be a non-empty string");
    example.label = label->get<std::string>();
  } else if (kind == Objective::kToken) {
    example.spans = read_spans(row, example.text.size(), path, line);
  }
  for (const auto& [key, value] : row.items()) {
    if (key == "text" || key == "label" || key == "spans") continue;
    if (value.is_string()) example.fields[key] = value.get<std::string>();
    else if (value.is_number_integer()) example.fields[key] = value.dump();
  }
  return example;
}

// FNV-1a over the text, then splitmix64 with the seed.
uint64_t text_hash(const std::string& text, uint64_t seed) {
  uint64_t z = fnv1a(text.data(), text.size()) + seed * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The BIO target of every token: spans overlapping a token's byte range.
std::vector<int64_t> bio_targets(const Encoding& encoding, const std::vector<LabeledSpan>& spans,
                                 const std::map<std::string, int64_t>& ids) {
  std::vector<int64_t> targets(encoding.size(), kIgnore);
  size_t next = 0;  // spans are sorted and disjoint; tokens run left to right
  const LabeledSpan* open = nullptr;
  for (size_t t = 0; t < encoding.size(); ++t) {
    if (encoding.special_tokens_mask[t]) continue;
    const Span& range = encoding.offsets[t];
    while (next < spans.size() && spans[next].end <= range.begin) ++next;
    const bool inside = next < spans.size() && spans[next].begin < range.end && range.begin < range.end;
    if (!inside) {
      targets[t] = ids.at("O");
      open = nullptr;
      continue;
    }
    const bool first = open != &spans[next];
    targets[t] = ids.at((first ? "B-" : "I-") + spans[next].label);
    open = &spans[next];
  }
  return targets;
}

}  // namespace

std::vector<Example> read_jsonl(const std::filesystem::path& path, Objective kind) {
  std::ifstream in(path);
  if (!in) throw InvalidInput(path.string() + ": cannot open", ErrorCode::kNotFound);
  std::vector<Example> examples;
  size_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    examples.push_back(read_row(line, kind, path, line_number));
  }
  if (examples.empty()) throw InvalidInput(path.string() + ": no examples");
  return examples;
}

Part part_of(const std::string& text, uint64_t seed, double valid_fraction, double test_fraction) {
  const double u = static_cast<double>(text_hash(text, seed) >> 11) * 0x1.0p-53;
  if (u < test_fraction) return Part::kTest;
  if (u < test_fraction + valid_fraction) return Part::kValid;
  return Part::kTrain;
}

bool HoldOut::matches(const Example& example) const {
  const auto field = [&](const std::string& key) -> const std::string* {
    const auto it = example.fields.find(key);
    return it == example.fields.end() ? nullptr : &it->second;
  };
  for (const auto& [key, value] : equal)
    if (const std::string* v = field(key); v && *v == value) return true;
  for (const auto& [key, fraction] : share)
    if (const std::string* v = field(key); v && part_of(key + "=" + *v, seed, 0, fraction) == Part::kTest) return true;
  return false;
}

std::vector<Example> take_held_out(std::vector<Example>& examples, const HoldOut& rules) {
  std::vector<Example> held_out;
  if (rules.empty()) return held_out;
  const auto kept_end = std::stable_partition(examples.begin(), examples.end(),
                                              [&](const Example& e) { return !rules.matches(e); });
  held_out.assign(std::make_move_iterator(kept_end), std::make_move_iterator(examples.end()));
  examples.erase(kept_end, examples.end());
  return held_out;
}

std::vector<Example> final_sentences(const std::vector<Example>& examples, size_t min_words) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  std::vector<Example> out;
  for (const Example& e : examples) {
    const std::string& t = e.text;
    size_t end = t.size();
    while (end > 0 && is_space(t[end - 1])) --end;
    // The last boundary before the final sentence: a line break, or an end
    // mark, white space and what starts a sentence (a capital, a quote; not
    // "e.g. 3.5").
    const auto starts_sentence = [&](size_t i) {
      while (i < end && is_space(t[i])) ++i;
      const auto c = static_cast<unsigned char>(i < end ? t[i] : 'a');
      return (c >= 'A' && c <= 'Z') || c == '"' || c == '(' || c >= 0x80;
    };
    size_t begin = std::string::npos;
    for (size_t i = end; i-- > 1;) {
      const bool mark = (t[i - 1] == '.' || t[i - 1] == '?' || t[i - 1] == '!') && is_space(t[i]) && starts_sentence(i);
      if (mark || t[i] == '\n') {
        begin = i;
        break;
      }
    }
    if (begin == std::string::npos) continue;
    while (begin < end && is_space(t[begin])) ++begin;
    std::string sentence = t.substr(begin, end - begin);
    size_t words = 0;
    for (size_t i = 0; i < sentence.size(); ++i) words += !is_space(sentence[i]) && (i == 0 || is_space(sentence[i - 1]));
    if (words < min_words) continue;
    Example short_form = e;
    short_form.text = std::move(sentence);
    short_form.spans.clear();
    out.push_back(std::move(short_form));
  }
  return out;
}

Split split(std::vector<Example> examples, uint64_t seed, double valid_fraction, double test_fraction) {
  if (valid_fraction < 0 || test_fraction < 0 || valid_fraction + test_fraction >= 1)
    throw InvalidInput("held-out fractions must be >= 0 and sum to less than 1");
  Split out;
  for (Example& e : examples) {
    switch (part_of(e.text, seed, valid_fraction, test_fraction)) {
      case Part::kTest: out.test.push_back(std::move(e)); break;
      case Part::kValid: out.valid.push_back(std::move(e)); break;
      case Part::kTrain: out.train.push_back(std::move(e)); break;
    }
  }
  if (out.train.empty()) throw InvalidInput("the held-out split left no training examples");
  return out;
}

std::vector<std::string> label_set(const std::vector<Example>& a, const std::vector<Example>& b, Objective kind) {
  std::set<std::string> names;
  for (const auto* examples : {&a, &b})
    for (const Example& e : *examples) {
      if (kind == Objective::kSequence) names.insert(e.label);
      for (const LabeledSpan& s : e.spans) names.insert(s.label);
    }
  if (kind != Objective::kToken) return {names.begin(), names.end()};
  std::vector<std::string> labels = {"O"};
  for (const std::string& type : names) {
    labels.push_back("B-" + type);
    labels.push_back("I-" + type);
  }
  return labels;
}

std::vector<std::string> label_set(const std::vector<Example>& examples, Objective kind) {
  return label_set(examples, {}, kind);
}

std::vector<Encoded> encode(const Tokenizer& tokenizer, const std::vector<Example>& examples, Objective kind,
                            const std::vector<std::string>& labels, size_t max_length) {
  std::map<std::string, int64_t> ids;
  for (size_t i = 0; i < labels.size(); ++i) ids[labels[i]] = static_cast<int64_t>(i);
  EncodeOptions options;
  options.max_length = max_length;
  std::vector<Encoded> out;
  out.reserve(examples.size());
  for (const Example& e : examples) {
    const Encoding encoding = tokenizer.encode(e.text, options);
    Encoded encoded;
    encoded.ids.assign(encoding.ids.begin(), encoding.ids.end());
    encoded.text_bytes = e.text.size();
    if (kind == Objective::kSequence) {
      const auto it = ids.find(e.label);
      if (it == ids.end()) throw InvalidInput("label '" + e.label + "' is not one of the model's labels");
      encoded.label = it->second;
    } else if (kind == Objective::kToken) {
      for (const LabeledSpan& s : e.spans)
        if (!ids.count("B-" + s.label)) throw InvalidInput("entity type '" + s.label + "' is not one of the model's");
      encoded.targets = bio_targets(encoding, e.spans, ids);
    } else {  // masked LM: any token but a special one may be masked
      for (size_t t = 0; t < encoding.size(); ++t)
        encoded.targets.push_back(encoding.special_tokens_mask[t] ? kIgnore : encoding.ids[t]);
    }
    out.push_back(std::move(encoded));
  }
  return out;
}

std::vector<Encoded> random_windows(const std::vector<Encoded>& examples, int64_t per_example, size_t min_tokens,
                                    uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Encoded> windows;
  for (const Encoded& e : examples) {
    if (e.ids.size() < 2 * min_tokens + 2) continue;
    const size_t inner = e.ids.size() - 2;  // text tokens between [CLS] and [SEP]
    for (int64_t i = 0; i < per_example; ++i) {
      const size_t length = std::uniform_int_distribution<size_t>(min_tokens, inner)(rng);
      const size_t start = 1 + std::uniform_int_distribution<size_t>(0, inner - length)(rng);
      Encoded w;
      w.ids = {e.ids.front()};
      w.ids.insert(w.ids.end(), e.ids.begin() + static_cast<std::ptrdiff_t>(start),
                   e.ids.begin() + static_cast<std::ptrdiff_t>(start + length));
      w.ids.push_back(e.ids.back());
      w.label = e.label;
      windows.push_back(std::move(w));
    }
  }
  return windows;
}

uint64_t fnv1a(const void* data, size_t bytes, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace semroute::training

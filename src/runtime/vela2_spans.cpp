#include "runtime/vela2_spans.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace semroute {
namespace {

constexpr int kUnlabelled = -1;

// Each word's label (kUnlabelled when its best probability does not pass
// the threshold) and that probability, in float32 as the packages compare.
void label_words(const WordProbabilities& w, float threshold, std::vector<int>& label, std::vector<float>& best) {
  const size_t n = w.words.size(), labels = w.labels.size();
  label.assign(n, kUnlabelled);
  best.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    size_t top = 0;
    float top_p = static_cast<float>(w.at(i, 0));
    for (size_t l = 1; l < labels; ++l)
      if (static_cast<float>(w.at(i, l)) > top_p) top = l, top_p = static_cast<float>(w.at(i, l));
    best[i] = top_p;
    if (top_p > threshold) label[i] = static_cast<int>(top);
  }
}

// Each word's unit (split_units): the one holding its first character, or -1.
std::vector<int64_t> word_units(const WordProbabilities& w) {
  const std::u32string& text = *w.text;
  std::vector<int64_t> unit_at(text.size(), -1);
  const std::vector<CodePointRange> units = split_units(text);
  for (size_t u = 0; u < units.size(); ++u)
    for (size_t c = units[u].first; c < units[u].second; ++c) unit_at[c] = static_cast<int64_t>(u);
  std::vector<int64_t> out;
  for (const CodePointRange& word : w.words) out.push_back(word.first < text.size() ? unit_at[word.first] : -1);
  return out;
}

// Within the words [begin, end) of one unit: labelled words of different
// labels take the label of the largest summed probability (a tie: the label
// seen first), and the unlabelled words between the first and the last
// labelled one take it too.
void join_unit(size_t begin, size_t end, const std::vector<float>& best, std::vector<int>& label) {
  std::vector<size_t> members;
  for (size_t i = begin; i < end; ++i)
    if (label[i] != kUnlabelled) members.push_back(i);
  if (members.empty()) return;
  std::vector<std::pair<int, double>> votes;  // by first appearance
  for (const size_t i : members) {
    auto it = std::find_if(votes.begin(), votes.end(), [&](const auto& v) { return v.first == label[i]; });
    if (it == votes.end()) it = votes.insert(votes.end(), {label[i], 0.0});
    it->second += static_cast<double>(best[i]);
  }
  int winner = votes[0].first;
  double top = votes[0].second;
  for (const auto& [l, sum] : votes)
    if (sum > top) winner = l, top = sum;
  for (size_t i = members.front(); i <= members.back(); ++i) label[i] = winner;
}

}  // namespace

std::vector<DecisionSpan> decode_spans(const WordProbabilities& w, double threshold) {
  const size_t n = w.words.size();
  if (n == 0 || w.labels.empty()) return {};
  std::vector<int> label;
  std::vector<float> best;
  label_words(w, static_cast<float>(threshold), label, best);
  if (std::all_of(label.begin(), label.end(), [](int l) { return l == kUnlabelled; })) return {};
  const std::vector<int64_t> unit = word_units(w);
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    while (end < n && unit[end] == unit[begin]) ++end;
    if (unit[begin] != -1) join_unit(begin, end, best, label);
    begin = end;
  }
  std::vector<DecisionSpan> spans;
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    while (end < n && label[end] == label[begin]) ++end;
    if (label[begin] != kUnlabelled) {
      const auto [start, stop] = trim_span(*w.text, w.words[begin].first, w.words[end - 1].second);
      if (start < stop) {
        float sum = 0;  // float32, as the packages average
        for (size_t i = begin; i < end; ++i) sum += static_cast<float>(w.at(i, static_cast<size_t>(label[begin])));
        const auto mean = static_cast<float>(static_cast<double>(sum) / static_cast<double>(end - begin));
        spans.push_back({w.labels[static_cast<size_t>(label[begin])], start, stop, utf8_of(*w.text, start, stop), mean});
      }
    }
    begin = end;
  }
  return spans;
}

namespace {

// numpy.interp: clamped at the ends, linear between the points.
double interpolate(double x, const std::vector<double>& xp, const std::vector<double>& fp) {
  if (xp.empty()) throw std::out_of_range("pii_length_rule.anchors: empty");
  if (x <= xp.front()) return fp.front();
  if (x >= xp.back()) return fp.back();
  size_t j = 0;
  while (j + 2 < xp.size() && x >= xp[j + 1]) ++j;
  return fp[j] + (x - xp[j]) * (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
}

// The PII rule's threshold for a part of `n` tokens: interpolated between
// the length rule's anchors in log-log, else the first bucket it fits.
std::optional<SpanThreshold> pii_threshold(const nlohmann::ordered_json& calibration, size_t n) {
  if (calibration.contains("pii_length_rule")) {
    std::vector<double> xp, fp;
    for (const auto& anchor : calibration["pii_length_rule"].at("anchors")) {
      xp.push_back(std::log(anchor.at("n_tokens").get<double>()));
      fp.push_back(std::log(anchor.at("threshold").get<double>()));
    }
    return SpanThreshold{std::exp(interpolate(std::log(static_cast<double>(std::max<size_t>(n, 1))), xp, fp)),
                         "pii:length"};
  }
  for (const auto& bucket : calibration.at("pii_buckets"))
    if (static_cast<double>(n) <= bucket.at("max_tokens").get<double>())
      return SpanThreshold{bucket.at("threshold").get<double>(), "pii:" + bucket.at("name").get<std::string>()};
  return std::nullopt;
}

bool all_pii_labels(const nlohmann::ordered_json& calibration, const std::vector<std::string>& labels) {
  const auto types = calibration.find("pii_types");
  if (labels.empty() || types == calibration.end() || !types->is_array()) return false;
  return std::all_of(labels.begin(), labels.end(),
                     [&](const std::string& l) { return std::find(types->begin(), types->end(), l) != types->end(); });
}

// The sparse gate: a PII threshold under t_sparse becomes t_sparse when at
// most K spans pass the probe threshold (few names stand out of a short text).
SpanThreshold sparse_gate(const nlohmann::ordered_json& calibration, SpanThreshold t, const WordProbabilities& words) {
  const auto gate = calibration.find("pii_sparse_gate");
  if (gate == calibration.end() || !gate->is_object() || gate->empty() || words.words.empty()) return t;
  const double k = gate->value("K", -1.0), t_sparse = gate->at("t_sparse").get<double>();
  if (k < 0 || t.value >= t_sparse) return t;
  if (static_cast<double>(decode_spans(words, gate->value("probe_threshold", 0.5)).size()) <= k)
    t = {t_sparse, t.rule + "+sparse"};
  return t;
}

}  // namespace

SpanThreshold span_threshold(const nlohmann::ordered_json& calibration, const std::string& key,
                             const WordProbabilities& words, size_t part_tokens, std::optional<double> given) {
  if (given) return {*given, "given"};
  try {
    if (key == "pii" || all_pii_labels(calibration, words.labels))
      if (const std::optional<SpanThreshold> pii = pii_threshold(calibration, part_tokens))
        return sparse_gate(calibration, *pii, words);
    const auto& thresholds = calibration.at("thresholds");
    if (key == "halu" || key == "toxic") return {thresholds.at("span:" + key).get<double>(), key};
    if (thresholds.contains("span:" + key)) return {thresholds["span:" + key].get<double>(), "span:" + key};
    return {thresholds.at("span:*").get<double>(), "span:*"};
  } catch (const nlohmann::json::exception& e) {
    throw std::out_of_range(std::string("calibration.json: ") + e.what());
  }
}

}  // namespace semroute

#include "training/metrics.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "training/training_data.h"

namespace semroute::training {
namespace {

struct Counts {
  int64_t true_positive = 0, predicted = 0, gold = 0;
};

ClassScore score(const std::string& name, const Counts& c) {
  ClassScore s;
  s.name = name;
  s.support = c.gold;
  s.precision = c.predicted ? static_cast<double>(c.true_positive) / static_cast<double>(c.predicted) : 0;
  s.recall = c.gold ? static_cast<double>(c.true_positive) / static_cast<double>(c.gold) : 0;
  s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0;
  return s;
}

double macro(const std::vector<ClassScore>& classes) {
  double sum = 0;
  int64_t n = 0;
  for (const ClassScore& c : classes)
    if (c.support > 0) sum += c.f1, ++n;
  return n ? sum / static_cast<double>(n) : 0;
}

using Entity = std::tuple<std::string, size_t, size_t>;  // type, first token, end token

std::set<Entity> entities(const std::vector<int64_t>& tags, const std::vector<int64_t>& scored,
                          const std::vector<std::string>& labels) {
  std::set<Entity> out;
  std::string open;
  size_t begin = 0;
  const auto close = [&](size_t end) {
    if (!open.empty()) out.emplace(open, begin, end);
    open.clear();
  };
  for (size_t t = 0; t < tags.size(); ++t) {
    if (scored[t] == kIgnore) continue;
    const std::string& label = labels.at(static_cast<size_t>(tags[t]));
    if (label.size() < 2 || label[1] != '-') {
      close(t);
      continue;
    }
    const std::string type = label.substr(2);
    if (label[0] == 'I' && type == open) continue;
    close(t);
    open = type;
    begin = t;
  }
  close(tags.size());
  return out;
}

}  // namespace

nlohmann::json Metrics::to_json() const {
  nlohmann::json per_class = nlohmann::json::object();
  for (const ClassScore& c : classes)
    per_class[c.name] = {{"precision", c.precision}, {"recall", c.recall}, {"f1", c.f1}, {"support", c.support}};
  return {{"count", count}, {"loss", loss}, {"accuracy", accuracy}, {"macro_f1", macro_f1},
          {"micro_f1", micro_f1}, {"classes", per_class}};
}

Metrics Metrics::from_json(const nlohmann::json& j) {
  Metrics m;
  m.count = j.at("count").get<int64_t>();
  m.loss = j.at("loss").get<double>();
  m.accuracy = j.at("accuracy").get<double>();
  m.macro_f1 = j.at("macro_f1").get<double>();
  m.micro_f1 = j.at("micro_f1").get<double>();
  for (const auto& [name, c] : j.at("classes").items())
    m.classes.push_back({name, c.at("precision").get<double>(), c.at("recall").get<double>(), c.at("f1").get<double>(),
                         c.at("support").get<int64_t>()});
  return m;
}

Metrics class_metrics(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted,
                      const std::vector<std::string>& labels) {
  std::vector<Counts> counts(labels.size());
  int64_t correct = 0;
  for (size_t i = 0; i < gold.size(); ++i) {
    counts[static_cast<size_t>(gold[i])].gold++;
    counts[static_cast<size_t>(predicted[i])].predicted++;
    if (gold[i] == predicted[i]) counts[static_cast<size_t>(gold[i])].true_positive++, ++correct;
  }
  Metrics m;
  m.count = static_cast<int64_t>(gold.size());
  m.accuracy = gold.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(gold.size());
  for (size_t c = 0; c < labels.size(); ++c) m.classes.push_back(score(labels[c], counts[c]));
  m.macro_f1 = macro(m.classes);
  m.micro_f1 = m.accuracy;
  return m;
}

Metrics entity_metrics(const std::vector<std::vector<int64_t>>& gold, const std::vector<std::vector<int64_t>>& predicted,
                       const std::vector<std::string>& labels) {
  std::map<std::string, Counts> by_type;
  Counts all;
  int64_t tokens = 0, correct = 0;
  for (size_t s = 0; s < gold.size(); ++s) {
    for (size_t t = 0; t < gold[s].size(); ++t)
      if (gold[s][t] != kIgnore) ++tokens, correct += gold[s][t] == predicted[s][t];
    const auto g = entities(gold[s], gold[s], labels), p = entities(predicted[s], gold[s], labels);
    for (const Entity& e : g) by_type[std::get<0>(e)].gold++, all.gold++;
    for (const Entity& e : p) {
      by_type[std::get<0>(e)].predicted++, all.predicted++;
      if (g.count(e)) by_type[std::get<0>(e)].true_positive++, all.true_positive++;
    }
  }
  Metrics m;
  m.count = tokens;
  m.accuracy = tokens ? static_cast<double>(correct) / static_cast<double>(tokens) : 0;
  for (const auto& [type, counts] : by_type) m.classes.push_back(score(type, counts));
  m.macro_f1 = macro(m.classes);
  m.micro_f1 = score("all", all).f1;
  return m;
}

nlohmann::json scores_by_length(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted,
                                const std::vector<size_t>& text_bytes, const std::vector<std::string>& labels,
                                const std::vector<size_t>& edges) {
  nlohmann::json buckets = nlohmann::json::array();
  for (size_t b = 0; b <= edges.size(); ++b) {
    const size_t low = b == 0 ? 0 : edges[b - 1];
    const size_t high = b < edges.size() ? edges[b] : SIZE_MAX;
    std::vector<int64_t> g, p;
    for (size_t i = 0; i < gold.size(); ++i)
      if (text_bytes[i] >= low && text_bytes[i] < high) g.push_back(gold[i]), p.push_back(predicted[i]);
    const Metrics m = class_metrics(g, p, labels);
    nlohmann::json per_class = nlohmann::json::object();
    for (const ClassScore& c : m.classes)
      if (c.support > 0) per_class[c.name] = {{"support", c.support}, {"recall", c.recall}};
    buckets.push_back({{"bytes", {low, b < edges.size() ? nlohmann::json(high) : nlohmann::json()}},
                       {"count", m.count}, {"accuracy", m.accuracy}, {"classes", per_class}});
  }
  return buckets;
}

nlohmann::json AlarmRates::to_json() const {
  return {{"threshold", threshold}, {"recall", recall}, {"false_alarm_rate", false_alarm_rate},
          {"positives", positives}, {"negatives", negatives}};
}

AlarmRates alarm_rates(const std::vector<double>& scores, const std::vector<bool>& positive, double threshold) {
  AlarmRates r;
  r.threshold = threshold;
  int64_t hits = 0, false_alarms = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    const bool alarm = scores[i] >= threshold;
    if (positive[i]) ++r.positives, hits += alarm;
    else ++r.negatives, false_alarms += alarm;
  }
  r.recall = r.positives ? static_cast<double>(hits) / static_cast<double>(r.positives) : 0;
  r.false_alarm_rate = r.negatives ? static_cast<double>(false_alarms) / static_cast<double>(r.negatives) : 0;
  return r;
}

AlarmRates pick_threshold(const std::vector<double>& scores, const std::vector<bool>& positive,
                          double max_false_alarm_rate) {
  std::vector<double> negative_scores;
  for (size_t i = 0; i < scores.size(); ++i)
    if (!positive[i]) negative_scores.push_back(scores[i]);
  std::sort(negative_scores.begin(), negative_scores.end(), std::greater<>());
  // `allowed` false alarms: the threshold must pass the next negative score.
  const auto allowed = static_cast<size_t>(std::floor(max_false_alarm_rate * static_cast<double>(negative_scores.size())));
  double threshold = 0;
  if (allowed < negative_scores.size())
    threshold = std::min(1.0, std::ceil(std::nextafter(negative_scores[allowed], 2.0) * 1000) / 1000);
  // As high as the same recall allows: up to the lowest positive score it catches.
  double lowest_caught = 2;
  for (size_t i = 0; i < scores.size(); ++i)
    if (positive[i] && scores[i] >= threshold) lowest_caught = std::min(lowest_caught, scores[i]);
  if (lowest_caught <= 1) threshold = std::max(threshold, std::floor(lowest_caught * 1000) / 1000);
  return alarm_rates(scores, positive, threshold);
}

nlohmann::json EntityReport::to_json() const {
  return {{"texts", texts}, {"precision", precision}, {"recall", recall}, {"f1", f1},
          {"all_types_found", all_types_found}, {"extra_types_per_text", extra_types_per_text},
          {"texts_with_extra_types", texts_with_extra_types}};
}

EntityReport entity_report(const std::vector<std::vector<LabeledSpan>>& gold,
                           const std::vector<std::vector<LabeledSpan>>& predicted) {
  EntityReport r;
  r.texts = static_cast<int64_t>(gold.size());
  Counts spans;
  int64_t texts_with_gold = 0, all_found = 0, extra = 0, with_extra = 0;
  for (size_t i = 0; i < gold.size(); ++i) {
    std::set<Entity> g, p;
    std::set<std::string> gold_types, found_types;
    for (const LabeledSpan& s : gold[i]) g.emplace(s.label, s.begin, s.end), gold_types.insert(s.label);
    for (const LabeledSpan& s : predicted[i]) p.emplace(s.label, s.begin, s.end), found_types.insert(s.label);
    spans.gold += static_cast<int64_t>(g.size());
    spans.predicted += static_cast<int64_t>(p.size());
    for (const Entity& e : p) spans.true_positive += g.count(e);
    int64_t extra_here = 0;
    for (const std::string& type : found_types) extra_here += !gold_types.count(type);
    extra += extra_here;
    with_extra += extra_here > 0;
    if (!gold_types.empty()) {
      ++texts_with_gold;
      all_found += std::includes(found_types.begin(), found_types.end(), gold_types.begin(), gold_types.end());
    }
  }
  const ClassScore s = score("", spans);
  r.precision = s.precision, r.recall = s.recall, r.f1 = s.f1;
  const auto share = [](int64_t n, int64_t of) { return of ? static_cast<double>(n) / static_cast<double>(of) : 0.0; };
  r.all_types_found = share(all_found, texts_with_gold);
  r.extra_types_per_text = share(extra, r.texts);
  r.texts_with_extra_types = share(with_extra, r.texts);
  return r;
}

}  // namespace semroute::training

#include "training/metrics.h"

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

}  // namespace semroute::training

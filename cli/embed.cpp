// `semroute embed`: sentence embeddings (pooling, normalization, Matryoshka
// dimension, early-exit layer) and their pairwise cosine similarities.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "cli.h"
#include "server/answer_json.h"
#include "semroute/error.h"
#include "classifiers/intent_index.h"
#include "classifiers/vector_index.h"
#include "tasks/embedder.h"
#include "tasks/pair_scorer.h"

namespace semroute::cli {

int run_embed(const Args& args) {
  const char* usage =
      "usage: semroute embed MODEL_DIR TEXT... | --input FILE | - [--pooling mean|cls|last] [--dim N] [--layer K] "
      "[--no-normalize] [--json]";
  if (args.positional.empty()) throw InvalidInput(usage);
  EmbedderOptions options{task_options(args)};
  if (!args.pooling.empty()) options.pooling = parse_pooling(args.pooling);
  options.dimension = args.dimension;
  options.layer = args.layer;
  if (args.no_normalize) options.normalize = false;
  options.prompt = args.prompt;
  const auto embedder = Embedder::load(args.positional[0], options);
  if (reads_input(args, 1)) {
    return stream_texts(args, [&](const std::vector<std::string_view>& texts) {
      std::vector<InputUsage> inputs;
      const at::Tensor e = embedder->embed(texts, embedder->defaults(), &inputs);
      std::vector<nlohmann::json> out;
      for (int64_t i = 0; i < e.size(0); ++i) {
        const float* row = e.data_ptr<float>() + i * e.size(1);
        const auto k = static_cast<size_t>(i);
        out.push_back({{"text", texts[k]}, {"embedding", std::vector<float>(row, row + e.size(1))},
                       {"input", input_json(inputs[k])}});
      }
      return out;
    });
  }
  if (args.positional.size() < 2) throw InvalidInput(usage);
  const std::vector<std::string_view> texts(args.positional.begin() + 1, args.positional.end());
  std::vector<InputUsage> inputs;
  const at::Tensor e = embedder->embed(texts, embedder->defaults(), &inputs);
  const int64_t dim = e.size(1);
  nlohmann::json out = {{"dimension", dim}, {"embeddings", nlohmann::json::array()}, {"inputs", nlohmann::json::array()}};
  for (int64_t i = 0; i < e.size(0); ++i) {
    const float* row = e.data_ptr<float>() + i * dim;
    out["embeddings"].push_back(std::vector<float>(row, row + dim));
    out["inputs"].push_back(input_json(inputs[static_cast<size_t>(i)]));
  }
  const at::Tensor sims = at::matmul(e, e.t()) /
                          at::outer(e.norm(2, {1}), e.norm(2, {1})).clamp_min(1e-12);
  out["cosine"] = nlohmann::json::array();
  for (int64_t i = 0; i < sims.size(0); ++i) {
    std::vector<float> row(sims.size(1));
    for (int64_t j = 0; j < sims.size(1); ++j) row[static_cast<size_t>(j)] = sims[i][j].item<float>();
    out["cosine"].push_back(row);
  }
  if (args.json) {
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  for (int64_t i = 0; i < e.size(0); ++i) {
    std::printf("[%lld dims] %.4f %.4f %.4f ...  %s\n", static_cast<long long>(dim), e[i][0].item<float>(),
                e[i][1].item<float>(), e[i][2].item<float>(), std::string(texts[static_cast<size_t>(i)]).c_str());
  }
  for (int64_t i = 0; i < sims.size(0); ++i)
    for (int64_t j = i + 1; j < sims.size(1); ++j)
      std::printf("cosine(%lld, %lld) = %.4f\n", static_cast<long long>(i), static_cast<long long>(j),
                  sims[i][j].item<float>());
  return 0;
}

}  // namespace semroute::cli

namespace semroute::cli {

int run_similarity(const Args& args) {
  if (args.positional.size() != 3) throw InvalidInput("usage: semroute similarity MODEL_DIR TEXT_A TEXT_B [--json]");
  EmbedderOptions options{task_options(args)};
  options.dimension = args.dimension;
  const auto embedder = Embedder::load(args.positional[0], options);
  const at::Tensor e = embedder->embed({args.positional[1], args.positional[2]});
  const float cosine = cosine_similarity(e[0].data_ptr<float>(), e[1].data_ptr<float>(), e.size(1));
  if (args.json) {
    std::printf("%s\n", nlohmann::json({{"cosine", cosine}, {"dimension", e.size(1)}}).dump().c_str());
  } else {
    std::printf("%.6f\n", cosine);
  }
  return 0;
}

int run_rerank(const Args& args) {
  if (args.positional.size() < 3)
    throw InvalidInput("usage: semroute rerank MODEL_DIR QUERY DOCUMENT... [--layer N] [--dim N] [--json]");
  PairScorerOptions options;
  static_cast<PipelineOptions&>(options) = task_options(args);
  options.layer = args.layer;
  options.dimension = args.dimension;
  const auto scorer = PairScorer::load(args.positional[0], options);
  const std::string& query = args.positional[1];
  std::vector<TextPair> pairs;
  for (size_t i = 2; i < args.positional.size(); ++i) pairs.emplace_back(query, args.positional[i]);
  const auto scores = scorer->score(pairs);
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a].score > scores[b].score; });
  nlohmann::json ranked = nlohmann::json::array();
  for (size_t i : order) {
    ranked.push_back({{"index", i}, {"document", pairs[i].second}, {"score", scores[i].score}});
    if (!args.json) std::printf("%10.4f  %s\n", scores[i].score, std::string(pairs[i].second).c_str());
  }
  if (args.json)
    std::printf("%s\n", nlohmann::json({{"query", query}, {"layer", scorer->layer()}, {"dimension", scorer->dimension()},
                                         {"ranked", ranked}}).dump(2).c_str());
  return 0;
}

int run_intents(const Args& args) {
  if (args.positional.size() < 3)
    throw InvalidInput("usage: semroute intents MODEL_DIR INTENTS.yaml TEXT... [--json]");
  const EmbedderOptions options{task_options(args)};
  const IntentIndex index(Embedder::load(args.positional[0], options), IntentSet::from_yaml(args.positional[1]));
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 2; i < args.positional.size(); ++i) {
    const IntentMatch m = index.match(args.positional[i]);
    out.push_back({{"text", args.positional[i]}, {"intent", m.intent}, {"score", m.score},
                   {"runner_up", m.runner_up}, {"margin", m.margin}});
    if (!args.json)
      std::printf("%-12s %.4f (runner-up %s, margin %.4f)  %s\n", m.intent.empty() ? "(none)" : m.intent.c_str(),
                  m.score, m.runner_up.c_str(), m.margin, args.positional[i].c_str());
  }
  if (args.json) std::printf("%s\n", nlohmann::json({{"results", out}}).dump(2).c_str());
  return 0;
}

}  // namespace semroute::cli

#include "training/trainer.h"

#include <c10/core/GradMode.h>
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <sstream>
#include <string>

#include "core/runtime.h"
#include "semroute/error.h"
#include "training/checkpoint.h"
#include "training/naive_bayes.h"

namespace semroute::training {
namespace {

struct Batch {
  at::Tensor ids, mask, targets;  // targets: [B] (sequence) or [B, T]
};

Batch make_batch(const std::vector<Encoded>& examples, const std::vector<size_t>& rows, Objective kind,
                 int32_t pad_id) {
  size_t length = 0;
  for (const size_t r : rows) length = std::max(length, examples[r].ids.size());
  const auto b = static_cast<int64_t>(rows.size()), t = static_cast<int64_t>(length);
  Batch batch{at::full({b, t}, pad_id, at::kLong), at::zeros({b, t}, at::kLong),
              kind == Objective::kSequence ? at::empty({b}, at::kLong) : at::full({b, t}, kIgnore, at::kLong)};
  auto ids = batch.ids.accessor<int64_t, 2>();
  auto mask = batch.mask.accessor<int64_t, 2>();
  for (int64_t i = 0; i < b; ++i) {
    const Encoded& e = examples[rows[static_cast<size_t>(i)]];
    for (size_t j = 0; j < e.ids.size(); ++j) {
      ids[i][static_cast<int64_t>(j)] = e.ids[j];
      mask[i][static_cast<int64_t>(j)] = 1;
      if (kind != Objective::kSequence) batch.targets[i][static_cast<int64_t>(j)] = e.targets[j];
    }
    if (kind == Objective::kSequence) batch.targets[i] = e.label;
  }
  return batch;
}

// Batches of similar length (little padding) in a shuffled order: shuffle,
// sort pools of 50 batches by length, cut, shuffle the batches.
std::vector<std::vector<size_t>> shuffled_batches(const std::vector<Encoded>& examples, int64_t batch_size,
                                                  std::mt19937_64& rng) {
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const auto size = static_cast<size_t>(batch_size);
  const size_t pool = size * 50;
  std::vector<std::vector<size_t>> batches;
  for (size_t begin = 0; begin < order.size(); begin += pool) {
    const auto first = order.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), begin + pool));
    std::stable_sort(first, last, [&](size_t a, size_t b) { return examples[a].ids.size() < examples[b].ids.size(); });
    for (auto it = first; it < last; it += static_cast<std::ptrdiff_t>(std::min<size_t>(size, last - it)))
      batches.emplace_back(it, it + static_cast<std::ptrdiff_t>(std::min<size_t>(size, last - it)));
  }
  std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

// BERT's masking: `p` of the maskable tokens become targets; of those 80 %
// read [MASK], 10 % a random token, 10 % stay.
void mask_tokens(Batch& batch, double p, int32_t mask_id, int64_t vocab, at::Generator& gen) {
  const at::Tensor maskable = batch.targets != kIgnore;
  const at::Tensor chosen = at::empty(batch.ids.sizes()).uniform_(0, 1, gen).lt(p).logical_and(maskable);
  batch.targets = batch.targets.masked_fill(chosen.logical_not(), kIgnore);
  const at::Tensor roll = at::empty(batch.ids.sizes()).uniform_(0, 1, gen);
  const at::Tensor random_ids = at::empty(batch.ids.sizes(), at::kLong).random_(0, vocab, gen);
  batch.ids = at::where(chosen.logical_and(roll < 0.8), at::full({}, mask_id, at::kLong), batch.ids);
  batch.ids = at::where(chosen.logical_and(roll >= 0.8).logical_and(roll < 0.9), random_ids, batch.ids);
}

// The batch the model reads, on its device: masked-LM targets masked with
// probability `p` first, on the CPU, from the checkpointed generator
// `masks` (unused for other tasks).
Batch model_batch(const TrainableModernBert& model, const std::vector<Encoded>& examples,
                  const std::vector<size_t>& rows, int32_t pad_id, int32_t mask_id, double p, at::Generator* masks) {
  Batch batch = make_batch(examples, rows, model.kind(), pad_id);
  if (model.kind() == Objective::kMaskedLm) mask_tokens(batch, p, mask_id, model.parsed().base.vocab_size, *masks);
  const c10::Device device = model.device();
  if (device.is_cpu()) return batch;
  return {batch.ids.to(device), batch.mask.to(device), batch.targets.to(device)};
}

// Scales the gradients so their global L2 norm is at most `max_norm`.
void clip_gradients(const std::vector<at::Tensor>& parameters, double max_norm) {
  at::Tensor squares;  // summed in double, read once (one device sync a step)
  for (const at::Tensor& p : parameters) {
    if (!p.grad().defined()) continue;
    const at::Tensor s = p.grad().pow(2).sum().to(at::kDouble);
    squares = squares.defined() ? squares + s : s;
  }
  const double norm = squares.defined() ? std::sqrt(squares.item<double>()) : 0;
  if (norm > max_norm)
    for (const at::Tensor& p : parameters)
      if (p.grad().defined()) p.grad().mul_(max_norm / (norm + 1e-6));
}

at::Tensor loss_of(const at::Tensor& logits, const at::Tensor& targets, Objective kind) {
  if (kind == Objective::kMaskedLm) return at::cross_entropy_loss(logits, targets.index({targets != kIgnore}));
  return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}), {}, at::Reduction::Mean,
                                kIgnore);
}

// Correct and scored predictions in a batch.
std::pair<int64_t, int64_t> hits(const at::Tensor& logits, const at::Tensor& targets, Objective kind) {
  const at::Tensor predicted = logits.argmax(-1);
  const at::Tensor gold = kind == Objective::kMaskedLm ? targets.index({targets != kIgnore}) : targets;
  const at::Tensor scored = gold != kIgnore;
  return {(predicted.eq(gold).logical_and(scored)).sum().item<int64_t>(), scored.sum().item<int64_t>()};
}

std::vector<std::vector<size_t>> ordered_batches(const std::vector<Encoded>& examples, int64_t batch_size) {
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return examples[a].ids.size() < examples[b].ids.size(); });
  std::vector<std::vector<size_t>> batches;
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(batch_size))
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), i + batch_size)));
  return batches;
}

// The score early stopping maximizes.
double selection_score(const Metrics& m, Objective kind) {
  if (kind == Objective::kSequence) return m.macro_f1;
  if (kind == Objective::kToken) return m.micro_f1;
  return -m.loss;
}

}  // namespace

nlohmann::json TrainReport::to_json() const {
  nlohmann::json epochs_json = nlohmann::json::array();
  for (const EpochReport& e : epochs)
    epochs_json.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"valid", e.valid.to_json()},
                           {"seconds", e.seconds}});
  nlohmann::json j = {{"epochs", epochs_json}, {"best_epoch", best_epoch}, {"steps", steps},
                      {"stopped_early", stopped_early}, {"seconds", seconds}};
  if (resumed_at_step >= 0) j["resumed_at_step"] = resumed_at_step;
  return j;
}

TrainReport TrainReport::from_json(const nlohmann::json& j) {
  TrainReport r;
  for (const auto& e : j.at("epochs"))
    r.epochs.push_back({e.at("epoch").get<int64_t>(), e.at("train_loss").get<double>(), Metrics::from_json(e.at("valid")),
                        e.at("seconds").get<double>()});
  r.best_epoch = j.at("best_epoch").get<int64_t>();
  r.steps = j.at("steps").get<int64_t>();
  r.stopped_early = j.at("stopped_early").get<bool>();
  r.seconds = j.at("seconds").get<double>();
  r.resumed_at_step = j.value("resumed_at_step", int64_t{-1});
  return r;
}

Metrics evaluate(const TrainableModernBert& model, const std::vector<Encoded>& examples,
                 const std::vector<std::string>& labels, int64_t batch_size, int32_t pad_id, int32_t mask_id,
                 std::vector<int64_t>* classes) {
  c10::NoGradGuard no_grad;
  const Objective kind = model.kind();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(12345);  // the same masks every epoch
  std::vector<int64_t> gold, predicted;
  std::vector<std::vector<int64_t>> gold_tags, predicted_tags;
  double loss_sum = 0;
  int64_t correct = 0, scored = 0;
  if (classes != nullptr) classes->assign(examples.size(), 0);
  for (const auto& rows : ordered_batches(examples, batch_size)) {
    const Batch batch = model_batch(model, examples, rows, pad_id, mask_id, 0.3, &gen);
    const at::Tensor logits = model.logits(batch.ids, batch.mask, false, batch.targets);
    if (logits.size(0) == 0) continue;
    loss_sum += loss_of(logits, batch.targets, kind).item<double>() * static_cast<double>(rows.size());
    const auto [c, s] = hits(logits, batch.targets, kind);
    correct += c, scored += s;
    const at::Tensor best = logits.argmax(-1).cpu().contiguous();
    for (size_t i = 0; i < rows.size(); ++i) {
      const Encoded& e = examples[rows[i]];
      if (kind == Objective::kSequence) {
        gold.push_back(e.label);
        predicted.push_back(best[static_cast<int64_t>(i)].item<int64_t>());
        if (classes != nullptr) (*classes)[rows[i]] = predicted.back();
      } else if (kind == Objective::kToken) {
        gold_tags.push_back(e.targets);
        const at::Tensor row = best[static_cast<int64_t>(i)].slice(0, 0, static_cast<int64_t>(e.ids.size()));
        predicted_tags.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
      }
    }
  }
  Metrics m;
  if (kind == Objective::kSequence) m = class_metrics(gold, predicted, labels);
  if (kind == Objective::kToken) m = entity_metrics(gold_tags, predicted_tags, labels);
  if (kind == Objective::kMaskedLm) {
    m.count = scored;
    m.accuracy = scored ? static_cast<double>(correct) / static_cast<double>(scored) : 0;
  }
  m.loss = examples.empty() ? 0 : loss_sum / static_cast<double>(examples.size());
  return m;
}

at::Tensor sequence_logits(const TrainableModernBert& model, const std::vector<Encoded>& examples, int64_t batch_size,
                           int32_t pad_id) {
  if (model.kind() != Objective::kSequence) throw InvalidInput("logits per example are for sequence tasks");
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> rows_logits(examples.size());
  for (const auto& rows : ordered_batches(examples, batch_size)) {
    const Batch batch = model_batch(model, examples, rows, pad_id, -1, 0, nullptr);
    const at::Tensor logits = model.logits(batch.ids, batch.mask, false, batch.targets).to(at::kCPU, at::kFloat);
    for (size_t i = 0; i < rows.size(); ++i) rows_logits[rows[i]] = logits[static_cast<int64_t>(i)];
  }
  return rows_logits.empty() ? at::zeros({0, 0}) : at::stack(rows_logits);
}

namespace {

// Mean negative log-likelihood of softmax(logits / t) at the gold classes.
double mean_nll(const at::Tensor& logits, const at::Tensor& gold, double t) {
  return -at::log_softmax(logits / t, -1).gather(1, gold.unsqueeze(1)).mean().item<double>();
}

}  // namespace

Calibration calibration(const at::Tensor& logits, const std::vector<int64_t>& gold, double temperature) {
  constexpr int64_t kBins = 15;
  Calibration c;
  if (gold.empty()) return c;
  const at::Tensor l = logits.to(at::kDouble), g = at::tensor(gold, at::kLong);
  const auto [top, best] = at::softmax(l / temperature, -1).max(-1);
  const at::Tensor bins = (top * kBins).to(at::kLong).clamp_max(kBins - 1);
  const at::Tensor gap = at::zeros({kBins}, at::kDouble).index_add_(0, bins, top - best.eq(g).to(at::kDouble));
  c.ece = gap.abs().sum().item<double>() / static_cast<double>(gold.size());  // Σ_b |Σ conf − Σ correct| / n
  c.nll = mean_nll(l, g, temperature);
  return c;
}

double fit_temperature(const at::Tensor& logits, const std::vector<int64_t>& gold) {
  if (gold.empty()) return 1;
  const at::Tensor l = logits.to(at::kDouble), g = at::tensor(gold, at::kLong);
  const auto nll = [&](double log_t) { return mean_nll(l, g, std::exp(log_t)); };
  const double shrink = (std::sqrt(5.0) - 1) / 2;
  double lo = -3, hi = 3;
  for (int i = 0; i < 50; ++i) {  // the bracket shrinks to 6 · 0.618^50
    const double a = hi - shrink * (hi - lo), b = lo + shrink * (hi - lo);
    if (nll(a) <= nll(b))
      hi = b;
    else
      lo = a;
  }
  return std::exp((lo + hi) / 2);
}

Metrics baseline(Objective kind, const std::vector<Encoded>& train_set, const std::vector<Encoded>& test,
                 const std::vector<std::string>& labels, std::vector<int64_t>* classes) {
  NaiveBayes bayes(kind, labels.size());
  bayes.fit(train_set);
  std::vector<int64_t> gold, predicted;
  std::vector<std::vector<int64_t>> gold_tags, predicted_tags;
  for (const Encoded& e : test) {
    if (kind == Objective::kSequence) {
      gold.push_back(e.label);
      predicted.push_back(bayes.predict(e).front());
      if (classes != nullptr) classes->push_back(predicted.back());
    } else {
      gold_tags.push_back(e.targets);
      predicted_tags.push_back(bayes.predict(e));
    }
  }
  return kind == Objective::kSequence ? class_metrics(gold, predicted, labels)
                                     : entity_metrics(gold_tags, predicted_tags, labels);
}

namespace {

// A hash of every example's ids, targets and label: the data, not only its size.
uint64_t data_hash(const std::vector<Encoded>& examples, uint64_t h = kFnv1aStart) {
  for (const Encoded& e : examples) {
    const int64_t sizes[3] = {static_cast<int64_t>(e.ids.size()), static_cast<int64_t>(e.targets.size()), e.label};
    h = fnv1a(sizes, sizeof sizes, h);
    h = fnv1a(e.ids.data(), e.ids.size() * sizeof(int64_t), h);
    h = fnv1a(e.targets.data(), e.targets.size() * sizeof(int64_t), h);
  }
  return h;
}

// What must match for a checkpoint to continue this run.
std::string run_fingerprint(const TrainableModernBert& model, const TrainOptions& o,
                            const std::vector<Encoded>& train_set, const std::vector<Encoded>& valid) {
  const size_t train_size = train_set.size(), valid_size = valid.size();
  int64_t weights = 0;
  for (const at::Tensor& t : model.snapshot()) weights += t.numel();
  std::ostringstream f;
  f << "epochs " << o.epochs << ", batch " << o.batch_size << ", lr " << o.learning_rate << ", decay "
    << o.weight_decay << ", warmup " << o.warmup_fraction << ", dropout " << o.dropout << ", clip " << o.max_grad_norm
    << ", patience " << o.patience << ", masking " << o.mask_probability << ", max steps " << o.max_steps << ", seed "
    << o.seed << (model.device().is_cpu() ? "" : ", device " + model.device().str())
    << (model.compute_dtype() == at::kFloat ? "" : ", compute bfloat16") << ", " << train_size << " training and " << valid_size << " validation examples, " << weights
    << " weights, data " << std::hex << data_hash(valid, data_hash(train_set));
  return f.str();
}

}  // namespace

TrainReport train(TrainableModernBert& model, const std::vector<Encoded>& train_set, const std::vector<Encoded>& valid,
                  const std::vector<std::string>& labels, const TrainOptions& options, int32_t pad_id,
                  int32_t mask_id, const std::function<void(const Progress&)>& progress) {
  if (options.epochs <= 0 || options.batch_size <= 0 || options.learning_rate <= 0)
    throw InvalidInput("epochs, batch size and learning rate must be positive");
  ensure_runtime_initialized();  // every usable CPU, as inference gets them
  const Objective kind = model.kind();
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  std::mt19937_64 rng(options.seed);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  at::manual_seed(options.seed);  // dropout draws from the default generator
  model.set_dropout(options.dropout);

  const auto [no_decay, decay] = model.trainable();
  std::vector<at::Tensor> parameters = no_decay;
  parameters.insert(parameters.end(), decay.begin(), decay.end());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  auto base = torch::optim::AdamWOptions(options.learning_rate).weight_decay(options.weight_decay);
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(base));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(base.weight_decay(0)));
  torch::optim::AdamW optimizer(std::move(groups), torch::optim::AdamWOptions(options.learning_rate));

  const int64_t per_epoch = (static_cast<int64_t>(train_set.size()) + options.batch_size - 1) / options.batch_size;
  int64_t total = per_epoch * options.epochs;
  if (options.max_steps > 0) total = std::min(total, options.max_steps);
  const double warmup = std::max(1.0, options.warmup_fraction * static_cast<double>(total));

  // The loop's position, restored from a checkpoint of this run if there is one.
  LoopState st;
  const bool checkpoints = !options.checkpoint_dir.empty();
  const std::string fingerprint = run_fingerprint(model, options, train_set, valid);
  if (checkpoints && load_checkpoint(options.checkpoint_dir, fingerprint, model, optimizer, st, gen)) {
    std::istringstream(st.epoch_rng) >> rng;
    st.report.resumed_at_step = st.step;
  }
  // A checkpoint that resumes at batch `batch` of epoch `epoch`.
  const auto save = [&](int64_t epoch, int64_t batch) {
    if (!checkpoints) return;
    LoopState at = st;
    at.epoch = epoch, at.batch = batch;
    save_checkpoint(options.checkpoint_dir, fingerprint, model, optimizer, at, gen);
  };
  for (; !st.finished && st.epoch <= options.epochs && st.step < total; ++st.epoch) {
    std::ostringstream epoch_start;
    epoch_start << rng;
    st.epoch_rng = epoch_start.str();
    const auto batches = shuffled_batches(train_set, options.batch_size, rng);
    for (; st.batch < static_cast<int64_t>(batches.size()); ++st.batch) {
      if (st.step >= total) break;
      const auto& rows = batches[static_cast<size_t>(st.batch)];
      const Batch batch = model_batch(model, train_set, rows, pad_id, mask_id, options.mask_probability, &gen);
      const at::Tensor logits = model.logits(batch.ids, batch.mask, true, batch.targets);
      if (logits.size(0) == 0) continue;
      const at::Tensor loss = loss_of(logits, batch.targets, kind);
      const double s = static_cast<double>(st.step + 1);
      const double lr = options.learning_rate *
                        std::min(s / warmup, std::max(0.0, (static_cast<double>(total) - s) /
                                                               std::max(1.0, static_cast<double>(total) - warmup)));
      for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
      optimizer.zero_grad();
      loss.backward();
      clip_gradients(parameters, options.max_grad_norm);
      optimizer.step();
      ++st.step, ++st.batches;
      st.loss_sum += loss.item<double>();
      const auto [c, n] = hits(logits.detach(), batch.targets, kind);
      st.correct += c, st.scored += n;
      if (options.checkpoint_every > 0 && st.step % options.checkpoint_every == 0) save(st.epoch, st.batch + 1);
      if (progress)
        progress({st.epoch, options.epochs, st.step, total, st.loss_sum / static_cast<double>(st.batches),
                  st.scored ? static_cast<double>(st.correct) / static_cast<double>(st.scored) : 0, elapsed()});
    }
    EpochReport epoch_report{st.epoch, st.batches ? st.loss_sum / static_cast<double>(st.batches) : 0, {}, 0};
    if (!valid.empty()) epoch_report.valid = evaluate(model, valid, labels, options.batch_size, pad_id, mask_id);
    epoch_report.seconds = elapsed();
    st.report.epochs.push_back(epoch_report);
    const double score = valid.empty() ? static_cast<double>(st.epoch) : selection_score(epoch_report.valid, kind);
    st.batch = 0, st.loss_sum = 0, st.batches = 0, st.correct = 0, st.scored = 0;
    if (score > st.best_score) {
      st.best_score = score, st.report.best_epoch = st.epoch, st.stale = 0;
      st.best = model.snapshot();
    } else if (++st.stale >= options.patience) {
      st.report.stopped_early = true;
      st.finished = true;
    }
    if (!st.finished) save(st.epoch + 1, 0);
  }
  st.finished = true;
  st.report.steps = st.step;
  save(st.epoch, 0);
  if (!st.best.empty()) model.restore(st.best);
  st.report.seconds = elapsed();
  return st.report;
}

}  // namespace semroute::training

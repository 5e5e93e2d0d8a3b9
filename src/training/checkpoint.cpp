#include "training/checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstring>
#include <filesystem>
#include <system_error>

#include "semroute/error.h"

namespace semroute::training {
namespace {

namespace fs = std::filesystem;

fs::path file_in(const std::string& dir) { return fs::path(dir) / "checkpoint.pt"; }

at::Tensor from_bytes(const std::string& s) {
  at::Tensor t = at::empty({static_cast<int64_t>(s.size())}, at::kByte);
  if (!s.empty()) std::memcpy(t.data_ptr(), s.data(), s.size());
  return t;
}

std::string to_bytes(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kByte).contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()));
}

at::Tensor integers(const std::vector<int64_t>& v) {
  return at::tensor(at::ArrayRef<int64_t>(v), at::kLong).clone();
}

void write_list(torch::serialize::OutputArchive& archive, const std::string& name, const std::vector<at::Tensor>& list) {
  archive.write(name + ".count", at::tensor(static_cast<int64_t>(list.size())));
  for (size_t i = 0; i < list.size(); ++i) archive.write(name + "." + std::to_string(i), list[i]);
}

std::vector<at::Tensor> read_list(torch::serialize::InputArchive& archive, const std::string& name) {
  at::Tensor count;
  archive.read(name + ".count", count);
  std::vector<at::Tensor> list(static_cast<size_t>(count.item<int64_t>()));
  for (size_t i = 0; i < list.size(); ++i) archive.read(name + "." + std::to_string(i), list[i]);
  return list;
}

at::Generator dropout_generator() { return at::detail::getDefaultCPUGenerator(); }

}  // namespace

void save_checkpoint(const std::string& dir, const std::string& fingerprint, const TrainableModernBert& model,
                     torch::optim::Optimizer& optimizer, const LoopState& s, const at::Generator& masks) {
  torch::serialize::OutputArchive archive;
  archive.write("fingerprint", from_bytes(fingerprint));
  write_list(archive, "model", model.snapshot());
  write_list(archive, "best", s.best);
  torch::serialize::OutputArchive moments;
  optimizer.save(moments);
  archive.write("optimizer", moments);
  archive.write("counters", integers({s.epoch, s.batch, s.step, s.stale, s.batches, s.correct, s.scored, s.finished}));
  archive.write("scores", at::tensor(at::ArrayRef<double>({s.best_score, s.loss_sum}), at::kDouble).clone());
  archive.write("epoch_rng", from_bytes(s.epoch_rng));
  archive.write("mask_rng", masks.get_state());
  archive.write("dropout_rng", dropout_generator().get_state());
  archive.write("report", from_bytes(s.report.to_json().dump()));
  std::error_code error;
  fs::create_directories(dir, error);
  const fs::path path = file_in(dir), temporary = path.string() + ".tmp";
  try {
    archive.save_to(temporary.string());
  } catch (const c10::Error& e) {
    throw Error(ErrorCode::kInternal, "cannot write the checkpoint " + temporary.string() + ": " + e.what_without_backtrace());
  }
  fs::rename(temporary, path, error);
  if (error) throw Error(ErrorCode::kInternal, "cannot rename the checkpoint to " + path.string() + ": " + error.message());
}

bool load_checkpoint(const std::string& dir, const std::string& fingerprint, TrainableModernBert& model,
                     torch::optim::Optimizer& optimizer, LoopState& s, at::Generator& masks) {
  const fs::path path = file_in(dir);
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return false;
  torch::serialize::InputArchive archive;
  LoopState loaded;
  std::vector<at::Tensor> weights;
  at::Tensor mask_state, dropout_state, counters, scores, saved_fingerprint, epoch_rng, report;
  try {
    archive.load_from(path.string());
    archive.read("fingerprint", saved_fingerprint);
    if (to_bytes(saved_fingerprint) != fingerprint)
      throw InvalidInput("the checkpoint in " + dir + " is of another run (" + to_bytes(saved_fingerprint) +
                         "; this run: " + fingerprint + "): delete it or give another --checkpoint-dir");
    weights = read_list(archive, "model");
    loaded.best = read_list(archive, "best");
    torch::serialize::InputArchive moments;
    archive.read("optimizer", moments);
    optimizer.load(moments);
    archive.read("counters", counters);
    archive.read("scores", scores);
    archive.read("epoch_rng", epoch_rng);
    archive.read("mask_rng", mask_state);
    archive.read("dropout_rng", dropout_state);
    archive.read("report", report);
  } catch (const c10::Error& e) {
    throw Error(ErrorCode::kInvalidModel, "unreadable checkpoint " + path.string() + ": " + e.what_without_backtrace());
  }
  const auto c = counters.accessor<int64_t, 1>();
  if (counters.numel() != 8 || scores.numel() != 2) throw Error(ErrorCode::kInvalidModel, "unreadable checkpoint " + path.string());
  loaded.epoch = c[0], loaded.batch = c[1], loaded.step = c[2], loaded.stale = c[3];
  loaded.batches = c[4], loaded.correct = c[5], loaded.scored = c[6], loaded.finished = c[7] != 0;
  loaded.best_score = scores[0].item<double>(), loaded.loss_sum = scores[1].item<double>();
  loaded.epoch_rng = to_bytes(epoch_rng);
  loaded.report = TrainReport::from_json(nlohmann::json::parse(to_bytes(report)));
  model.restore(weights);
  masks.set_state(mask_state);
  dropout_generator().set_state(dropout_state);
  s = std::move(loaded);
  return true;
}

}  // namespace semroute::training

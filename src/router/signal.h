// What a routing decision is made of: signals computed from a request (a
// classifier's label, PII entity types, a keyword match, the text's length,
// the caller's metadata …), each exposing named fields of one type. The
// decision engine asks for a signal only when a condition still needs it, so
// a signal that runs a model costs nothing on requests decided without it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace semroute {

class PromptCompressor;
struct CompressedText;

// What a route is asked about: the text to classify (the last user message of
// a chat request) and the caller's metadata (user role, headers …).
struct RouteInput {
  std::string text;
  std::map<std::string, std::string> metadata;
  // The text's embeddings by model (an Embedder's address): computed once per
  // request by the first signal that needs each (signals of one request run
  // one after another).
  mutable std::map<const void*, std::shared_ptr<const std::vector<float>>> embeddings;
  // The router's prompt compression (its `compression:` section), or null;
  // the skeleton of `text`, computed once by the first signal that reads it.
  const PromptCompressor* compressor = nullptr;
  mutable std::shared_ptr<const CompressedText> skeleton{};

  // The skeleton (the text itself without a compressor, or when it fits).
  const CompressedText& compressed() const;
  // A copy for another thread: the memos computed so far are shared (they are immutable).
  RouteInput copy() const { return RouteInput{text, metadata, embeddings, compressor, skeleton}; }
};

enum class FieldType { kBool, kNumber, kLabel, kLabelSet };

const char* field_type_name(FieldType type);

// The type of a field and, for labels, the values it can take (empty: any
// string, e.g. metadata).
struct FieldSpec {
  FieldType type = FieldType::kNumber;
  std::vector<std::string> labels;
};

// One computed field. `confidence` is how sure the signal is of it (a
// classifier's probability for its label; 1 for exact facts).
struct FieldValue {
  FieldType type = FieldType::kNumber;
  bool truth = false;
  double number = 0;
  std::string label;
  std::vector<std::string> labels;  // kLabelSet
  double confidence = 1;

  static FieldValue boolean(bool b);
  static FieldValue of_number(double x);
  static FieldValue of_label(std::string label, double confidence = 1);
  static FieldValue of_labels(std::vector<std::string> labels);
  std::string to_string() const;  // for traces: true, 0.93, math (0.81), [EMAIL, PHONE]
};

// A signal's fields by name; "" is the signal's own value (`domain`), others
// are `domain.confidence`, `jailbreak.risk` …
using SignalValues = std::map<std::string, FieldValue>;

class Signal {
 public:
  explicit Signal(std::string name) : name_(std::move(name)) {}
  virtual ~Signal() = default;
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;

  const std::string& name() const { return name_; }
  // Relative cost: 0 for what needs no model (length, keywords, metadata),
  // more for a model call; conditions evaluate cheaper branches first.
  virtual int cost() const = 0;
  // The spec of `field` ("" for the signal itself), or nullopt if it has none.
  virtual std::optional<FieldSpec> field(const std::string& field) const = 0;
  // Every field for `input`. Thread-safe. Throws Error on bad input.
  virtual SignalValues compute(const RouteInput& input) const = 0;
  // Fields this signal takes, for error messages ("confidence, risk, <label>").
  virtual std::string describe_fields() const = 0;

 private:
  std::string name_;
};

using SignalSet = std::map<std::string, std::shared_ptr<const Signal>>;

}  // namespace semroute

#include "router/signal.h"

#include <cstdio>

#include "compression/prompt_compressor.h"

namespace semroute {

const CompressedText& RouteInput::compressed() const {
  if (!skeleton) {
    if (compressor) {
      skeleton = std::make_shared<const CompressedText>(compressor->compress(text));
    } else {
      CompressedText whole;
      whole.text = text;
      whole.kept.push_back({0, static_cast<uint32_t>(text.size())});
      skeleton = std::make_shared<const CompressedText>(std::move(whole));
    }
  }
  return *skeleton;
}

const char* field_type_name(FieldType type) {
  switch (type) {
    case FieldType::kBool: return "boolean";
    case FieldType::kNumber: return "number";
    case FieldType::kLabel: return "label";
    case FieldType::kLabelSet: return "label set";
  }
  return "?";
}

FieldValue FieldValue::boolean(bool b) {
  FieldValue v;
  v.type = FieldType::kBool;
  v.truth = b;
  return v;
}

FieldValue FieldValue::of_number(double x) {
  FieldValue v;
  v.type = FieldType::kNumber;
  v.number = x;
  return v;
}

FieldValue FieldValue::of_label(std::string label, double confidence) {
  FieldValue v;
  v.type = FieldType::kLabel;
  v.label = std::move(label);
  v.confidence = confidence;
  return v;
}

FieldValue FieldValue::of_labels(std::vector<std::string> labels) {
  FieldValue v;
  v.type = FieldType::kLabelSet;
  v.labels = std::move(labels);
  return v;
}

std::string FieldValue::to_string() const {
  char number_text[32];
  switch (type) {
    case FieldType::kBool: return truth ? "true" : "false";
    case FieldType::kNumber:
      std::snprintf(number_text, sizeof number_text, "%.4g", number);
      return number_text;
    case FieldType::kLabel:
      if (confidence >= 1) return label;
      std::snprintf(number_text, sizeof number_text, " (%.2f)", confidence);
      return label + number_text;
    case FieldType::kLabelSet: {
      std::string out = "[";
      for (size_t i = 0; i < labels.size(); ++i) out += (i ? ", " : "") + labels[i];
      return out + "]";
    }
  }
  return "";
}

}  // namespace semroute

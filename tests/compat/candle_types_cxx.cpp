#include "candle_types.h"
static_assert(sizeof(ClassificationResultWithProbs) == 32, "layout");
int main() { ClassificationResult r{}; return r.class_; }

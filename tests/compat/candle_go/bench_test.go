package candlecompat

import (
	"testing"

	sr "github.com/semroute/semroute/bindings/go"
)

// The drop-in's per-call overhead: the same model and text through
// classify_modernbert_text_with_probabilities and through semroute's Go
// package (both one cgo call into the same engine).
const benchText = "What is the derivative of x^2 + 3x?"

func BenchmarkDropInClassifyWithProbs(b *testing.B) {
	InitPath("init_modernbert_classifier", benchModel(b, "intent"))
	text := benchText
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ClassifyWithProbs("classify_modernbert_text_with_probabilities", &text)
	}
}

// semrouteModel loads a reference model for a benchmark.
func semrouteModel(b *testing.B, name string) *sr.Model {
	m, err := sr.Load(benchModel(b, name), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

func BenchmarkSemrouteClassify(b *testing.B) {
	m := semrouteModel(b, "intent")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Classify(benchText); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDropInPIITokens(b *testing.B) {
	InitPath("init_mmbert_32k_pii_classifier", benchModel(b, "pii"))
	text := "Contact john.smith@example.com or Jane Doe."
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		PIITokens(&text)
	}
}

func BenchmarkSemrouteTokens(b *testing.B) {
	m := semrouteModel(b, "pii")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.ClassifyTokens("Contact john.smith@example.com or Jane Doe."); err != nil {
			b.Fatal(err)
		}
	}
}

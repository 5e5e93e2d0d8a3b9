package candlecompat

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	sr "github.com/semroute/semroute/bindings/go"
)

// Models made by scripts/test-candle-go.sh: tiny random checkpoints in the
// layout of published Hugging Face directories.
func model(t *testing.T, name string) string { return benchModel(t, name) }

func benchModel(t testing.TB, name string) string {
	dir := os.Getenv("CANDLE_TEST_MODELS")
	if dir == "" {
		t.Skip("CANDLE_TEST_MODELS is not set (run scripts/test-candle-go.sh)")
	}
	return filepath.Join(dir, name)
}

func reference(t *testing.T, name string, opts *sr.Options) *sr.Model {
	m, err := sr.Load(model(t, name), opts)
	if err != nil {
		t.Fatalf("semroute load %s: %v", name, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

const tolerance = 1e-5

func near(a, b float32) bool { return math.Abs(float64(a-b)) <= tolerance }

func sameFloats(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, semroute gives %d", what, len(got), len(want))
	}
	for i := range got {
		if !near(got[i], want[i]) {
			t.Fatalf("%s[%d] = %v, semroute gives %v", what, i, got[i], want[i])
		}
	}
}

func ptr(s string) *string { return &s }

var texts = []string{
	"What is the derivative of x^2 + 3x?",
	"Is this contract binding under Delaware law?",
	"",
	"Ünïcödé — 日本語のテキスト 😀",
}

// Before any init: every classifier answers its sentinel, never crashes.
func TestSentinelsBeforeInit(t *testing.T) {
	model(t, "intent")
	if c := Classify("classify_modernbert_pii_text", ptr("hello")); c.Class != -1 {
		t.Fatalf("uninitialised classifier answered class %d", c.Class)
	}
	if c := ClassifyWithProbs("classify_jailbreak_text_with_probabilities", ptr("hello")); c.Class != -1 || c.Probs != nil {
		t.Fatalf("uninitialised jailbreak classifier answered %+v", c)
	}
	if _, n := PIITokens(ptr("mail me")); n != 0 {
		t.Fatalf("uninitialised PII classifier: num_entities %d", n)
	}
	if _, rc, failed := Embed2D("x", "mmbert", 0, 0); rc != -1 || !failed {
		t.Fatalf("embedding before init: rc %d error %v", rc, failed)
	}
	if _, rc := ModelsInfo(); rc != -1 {
		t.Fatalf("models info before init: rc %d", rc)
	}
	if d := DetectHallucinations("c", "q", "a", 0.5, false); d.Error == "" {
		t.Fatal("hallucination detection before init did not report an error")
	}
	if n := ClassifyNLI("a", "b"); n.Error == "" || n.Label != 0 {
		t.Fatalf("NLI before init: %+v", n)
	}
	if _, batch := ClassifyLoRA([]string{"x"}); batch != 0 {
		t.Fatalf("LoRA batch before init: batch_size %d", batch)
	}
	if _, msg := ClassifyUnified([]string{"x"}); msg == "" {
		t.Fatal("unified batch before init: no error message")
	}
	if v, _ := TextEmbedding("x", 0); v != nil {
		t.Fatal("text embedding before init answered")
	}
}

// Every sequence-classifier slot equals semroute's answer (class, confidence,
// probabilities), keeps its first model, and answers -1 for NULL and
// invalid UTF-8.
func TestSequenceClassifiers(t *testing.T) {
	intent := reference(t, "intent", nil)
	jailbreak := reference(t, "jailbreak", nil)
	slots := []struct {
		init, classify, withProbs string
		ref                       *sr.Model
		dir                       string
		againTrue                 bool
	}{
		{"init_modernbert_classifier", "classify_modernbert_text", "classify_modernbert_text_with_probabilities", intent, "intent", false},
		{"init_modernbert_jailbreak_classifier", "classify_modernbert_jailbreak_text", "classify_modernbert_jailbreak_text_with_probabilities", jailbreak, "jailbreak", false},
		{"init_modernbert_pii_classifier", "classify_modernbert_pii_text", "", intent, "intent", false},
		{"init_fact_check_classifier", "classify_fact_check_text", "", jailbreak, "jailbreak", true},
		{"init_feedback_detector", "classify_feedback_text", "", intent, "intent", true},
		{"init_mmbert_32k_intent_classifier", "classify_mmbert_32k_intent", "", intent, "intent", false},
		{"init_mmbert_32k_factcheck_classifier", "classify_mmbert_32k_factcheck", "", jailbreak, "jailbreak", false},
		{"init_mmbert_32k_jailbreak_classifier", "classify_mmbert_32k_jailbreak", "classify_mmbert_32k_jailbreak_with_probabilities", jailbreak, "jailbreak", false},
		{"init_mmbert_32k_feedback_classifier", "classify_mmbert_32k_feedback", "", intent, "intent", false},
		{"init_mmbert_32k_modality_classifier", "classify_mmbert_32k_modality", "", intent, "intent", false},
	}
	for _, s := range slots {
		if !InitPath(s.init, model(t, s.dir)) {
			t.Fatalf("%s failed", s.init)
		}
		// Write-once: a second init keeps the first model and answers as upstream does.
		if got := InitPath(s.init, model(t, "nli")); got != s.againTrue {
			t.Fatalf("%s a second time returned %v", s.init, got)
		}
		for _, text := range texts {
			want, err := s.ref.Classify(text)
			if err != nil {
				t.Fatal(err)
			}
			got := Classify(s.classify, ptr(text))
			if got.Class != want.ClassID || !near(got.Confidence, want.Confidence) {
				t.Fatalf("%s(%q) = %+v, semroute gives %d %v", s.classify, text, got, want.ClassID, want.Confidence)
			}
			if s.withProbs != "" {
				got := ClassifyWithProbs(s.withProbs, ptr(text))
				if got.Class != want.ClassID {
					t.Fatalf("%s(%q): class %d, semroute gives %d", s.withProbs, text, got.Class, want.ClassID)
				}
				sameFloats(t, s.withProbs, got.Probs, want.Probabilities)
			}
		}
		if c := Classify(s.classify, nil); c.Class != -1 {
			t.Fatalf("%s(NULL) = %+v", s.classify, c)
		}
		if c := Classify(s.classify, ptr("bad \xff byte")); c.Class != -1 {
			t.Fatalf("%s(invalid UTF-8) = %+v", s.classify, c)
		}
	}
	// An HF model id where a directory is expected fails (no download).
	if InitPath("init_mmbert_32k_intent_classifier", "answerdotai/ModernBERT-base") {
		t.Fatal("an HF id was accepted")
	}
	// The generic (BERT) classifier fills the probabilities upstream leaves empty.
	if !InitPath("init_generic_classifier", model(t, "intent")) {
		t.Fatal("init_generic_classifier failed")
	}
	want, _ := intent.Classify(texts[0])
	got := GenericWithProbs(texts[0])
	if got.Class != want.ClassID || got.Label != want.Label {
		t.Fatalf("classify_text_with_probabilities = %+v, semroute gives %+v", got, want)
	}
	sameFloats(t, "classify_text_with_probabilities", got.Probs, want.Probabilities)
}

func sameEntities(t *testing.T, what string, got []Entity, want []sr.Entity) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entities, semroute gives %d", what, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.Type || g.Start != w.Begin || g.End != w.End || g.Text != w.Text || !near(g.Confidence, w.Score) {
			t.Fatalf("%s entity %d = %+v, semroute gives %+v", what, i, g, w)
		}
	}
}

func TestTokenClassifiers(t *testing.T) {
	ref := reference(t, "pii", nil)
	for _, name := range []string{"init_mmbert_32k_pii_classifier", "init_modernbert_pii_token_classifier"} {
		if !InitPath(name, model(t, "pii")) {
			t.Fatalf("%s failed", name)
		}
	}
	inputs := []string{"Contact john.smith@example.com or Jane Doe.", "Écrivez à josé@exemple.fr 😀", ""}
	for _, text := range inputs {
		want, err := ref.ClassifyTokens(text)
		if err != nil {
			t.Fatal(err)
		}
		got, n := PIITokens(ptr(text))
		if n != len(got) {
			t.Fatalf("num_entities %d for %d entities", n, len(got))
		}
		sameEntities(t, "classify_mmbert_32k_pii_tokens", got, want.Entities)
		for _, e := range got { // byte offsets: the text is the input's bytes
			if text[e.Start:e.End] != e.Text {
				t.Fatalf("entity text %q is not bytes [%d,%d) of the input", e.Text, e.Start, e.End)
			}
		}
		fallback, _ := CandleBertTokens(text) // no BERT token model: the ModernBERT one answers
		sameEntities(t, "classify_candle_bert_tokens", fallback, want.Entities)
		withConfig, _ := ModernBertPIITokens(text, model(t, "pii/config.json"))
		sameEntities(t, "classify_modernbert_pii_tokens", withConfig, want.Entities)
	}
	if _, n := ModernBertPIITokens("x", "/nonexistent/config.json"); n != -1 {
		t.Fatalf("unreadable config path: num_entities %d, want -1", n)
	}
	if _, n := PIITokens(nil); n != 0 {
		t.Fatalf("NULL text: num_entities %d", n)
	}
}

func TestSimilarityModel(t *testing.T) {
	ref := reference(t, "bert", &sr.Options{Task: sr.TaskEmbedding})
	if InitPath("init_similarity_model", "") {
		t.Fatal("an empty model id (upstream's download) was accepted")
	}
	if !InitPath("init_similarity_model", model(t, "bert")) {
		t.Fatal("init_similarity_model failed")
	}
	if InitPath("init_similarity_model", model(t, "bert")) {
		t.Fatal("a second init_similarity_model returned true")
	}
	candidates := []string{"protein folding", "court ruling", "solve for x"}
	var want [][]float32
	for _, c := range candidates {
		e, err := ref.Embed(c)
		if err != nil {
			t.Fatal(err)
		}
		got, failed := TextEmbedding(c, 0)
		if failed {
			t.Fatal("get_text_embedding failed")
		}
		sameFloats(t, "get_text_embedding", got, e)
		want = append(want, e)
	}
	q, _ := ref.Embed("solve for y")
	best, bestScore := -1, float32(-2)
	for i, e := range want {
		var s float32
		for k := range e {
			s += e[k] * q[k]
		}
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	if i, s := MostSimilar("solve for y", candidates); i != best || !near(s, bestScore) {
		t.Fatalf("find_most_similar = %d %v, semroute gives %d %v", i, s, best, bestScore)
	}
	sim, _ := ref.Similarity(candidates[0], candidates[1])
	if got := Similarity(candidates[0], candidates[1]); !near(got, sim) {
		t.Fatalf("calculate_similarity = %v, semroute gives %v", got, sim)
	}
	tokens, err := ref.Tokenize("solve for x", true)
	if err != nil {
		t.Fatal(err)
	}
	ids, strs, failed := Tokenize("solve for x", 0)
	if failed || len(ids) != len(tokens.IDs) || len(strs) != len(ids) {
		t.Fatalf("tokenize_text = %v %v, semroute gives %v", ids, strs, tokens.IDs)
	}
	for i := range ids {
		if ids[i] != tokens.IDs[i] {
			t.Fatalf("tokenize_text ids %v, semroute gives %v", ids, tokens.IDs)
		}
	}
	// max_length cuts the text: 3 tokens = [CLS] first-word [SEP].
	if ids, _, _ := Tokenize("solve for x", 3); len(ids) != 3 {
		t.Fatalf("tokenize_text(max_length 3) gave %d tokens", len(ids))
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestEmbeddings(t *testing.T) {
	qwen3 := reference(t, "qwen3", &sr.Options{Task: sr.TaskEmbedding})
	mmbert2d := reference(t, "intent", &sr.Options{Task: sr.TaskEmbedding, Layer: 2, Dimension: 16})
	if !InitEmbeddingModels(model(t, "qwen3"), model(t, "gemma"), model(t, "intent")) {
		t.Fatal("init_embedding_models_with_mmbert failed")
	}
	// Later inits keep the first models and answer true (upstream's rule).
	if !InitEmbeddingModels(model(t, "gemma"), "", "") {
		t.Fatal("a second embedding init returned false")
	}
	for _, text := range texts {
		want, _ := qwen3.Embed(text)
		got, rc, failed := Embed2D(text, "qwen3", 0, 0)
		if rc != 0 || failed || got.ModelType != 0 || got.SequenceLength != len(strings.Fields(text)) {
			t.Fatalf("qwen3 embedding of %q: rc %d error %v type %d length %d", text, rc, failed, got.ModelType, got.SequenceLength)
		}
		sameFloats(t, "qwen3 embedding", got.Values, want)

		want, _ = mmbert2d.Embed(text)
		got, rc, _ = Embed2D(text, "mmbert", 2, 16)
		if rc != 0 || got.ModelType != 2 {
			t.Fatalf("mmbert 2D embedding: rc %d type %d", rc, got.ModelType)
		}
		sameFloats(t, "mmbert layer 2 dim 16", got.Values, want)
		if math.Abs(norm(got.Values)-1) > 1e-5 {
			t.Fatalf("Matryoshka rows are not re-normalised: norm %v", norm(got.Values))
		}
	}
	if _, rc, _ := Embed2D("x", "nonsense", 0, 0); rc != -1 {
		t.Fatal("an unknown model_type was accepted")
	}
	if _, rc, _ := Embed2D("x", "multimodal", 0, 0); rc != -1 {
		t.Fatal("multimodal embedding answered")
	}
	// A dimension beyond the model's is the whole embedding (upstream's rule).
	full, _, _ := Embed2D("x", "gemma", 0, 0)
	wide, _, _ := Embed2D("x", "gemma", 0, 100000)
	sameFloats(t, "gemma dim > full", wide.Values, full.Values)
	// Auto routing: a short text with quality priority goes to qwen3.
	if e, rc := EmbedWithDim("short text", 0.9, 0.1, 0); rc != 0 || e.ModelType != 0 {
		t.Fatalf("get_embedding_with_dim routed to %d (rc %d)", e.ModelType, rc)
	}
	if e, rc := EmbedWithDim("short text", 0.1, 0.9, 0); rc != 0 || e.ModelType != 1 {
		t.Fatalf("get_embedding_with_dim with latency priority routed to %d (rc %d)", e.ModelType, rc)
	}
	// Top-k: the order of semroute's cosine similarities.
	candidates := []string{"court ruling", "derivative of sin", "protein folding", "solve for x"}
	matches, modelType, rc := SimilarityBatch("solve for y", candidates, 2, "qwen3")
	if rc != 0 || modelType != 0 || len(matches) != 2 {
		t.Fatalf("calculate_similarity_batch: rc %d type %d matches %v", rc, modelType, matches)
	}
	want, _ := qwen3.TopK(context.Background(), "solve for y", candidates, 2)
	for i := range matches {
		if matches[i].Index != want[i].Index || !near(matches[i].Similarity, want[i].Score) {
			t.Fatalf("calculate_similarity_batch = %v, semroute gives %v", matches, want)
		}
	}
	sim, _ := qwen3.Similarity("a cat", "a dog")
	if got, rc := EmbeddingSimilarity("a cat", "a dog", "qwen3"); rc != 0 || !near(got, sim) {
		t.Fatalf("calculate_embedding_similarity = %v (rc %d), semroute gives %v", got, rc, sim)
	}
	info, rc := ModelsInfo()
	if rc != 0 || info["qwen3"][0] != 1 || info["gemma"][0] != 1 || info["qwen3"][1] != len(full.Values) && info["qwen3"][1] == 0 {
		t.Fatalf("get_embedding_models_info = %v (rc %d)", info, rc)
	}
}

// 16 goroutines on the batched path: coalesced answers equal unbatched ones.
func TestBatchedEmbeddings(t *testing.T) {
	ref := reference(t, "qwen3", &sr.Options{Task: sr.TaskEmbedding})
	if !InitBatched(model(t, "qwen3"), 8, 5) {
		t.Fatal("init_embedding_models_batched failed")
	}
	inGoroutines(t, 16, 20, func(g, i int) string {
		text := texts[(g+i)%len(texts)]
		want, _ := ref.Embed(text)
		got, rc := EmbedBatched(text, 0)
		if rc != 0 || len(got.Values) != len(want) {
			return "batched embedding failed"
		}
		for k := range want {
			if !near(got.Values[k], want[k]) {
				return "batched embedding differs from the unbatched one"
			}
		}
		return ""
	})
	if _, rc := EmbedBatched("bad \xff byte", 0); rc != -1 {
		t.Fatal("invalid UTF-8 was embedded")
	}
}

func TestHallucinationAndNLI(t *testing.T) {
	nli := reference(t, "nli", nil)
	if !InitPath("init_hallucination_model", model(t, "halu")) || !InitPath("init_nli_model", model(t, "nli")) {
		t.Fatal("init failed")
	}
	if !InitPath("init_nli_model", model(t, "intent")) {
		t.Fatal("init_nli_model is idempotent upstream (true when set)")
	}
	want, _ := nli.ClassifyPairs(context.Background(), []string{"A man eats."}, []string{"Someone is eating."})
	got := ClassifyNLI("A man eats.", "Someone is eating.")
	if got.Error != "" || got.Label != want[0].ClassID || !near(got.Confidence, want[0].Confidence) {
		t.Fatalf("classify_nli = %+v, semroute gives %+v", got, want[0])
	}
	sameFloats(t, "classify_nli", []float32{got.Entailment, got.Neutral, got.Contradiction}, want[0].Probabilities)

	answer := "The Eiffel Tower is 330 metres tall and was built in 1889 by Gustave Eiffel."
	low := DetectHallucinations("The tower is in Paris.", "How tall is it?", answer, 0.01, false)
	high := DetectHallucinations("The tower is in Paris.", "How tall is it?", answer, 1.0, false)
	if low.Error != "" || len(low.Spans) < len(high.Spans) || low.HasHallucination != (len(low.Spans) > 0) {
		t.Fatalf("detect_hallucinations: %+v / %+v", low, high)
	}
	for _, s := range low.Spans {
		if answer[s.Start:s.End] != s.Text || s.Label != "HALLUCINATED" || s.Confidence < 0.01 {
			t.Fatalf("span %+v is not bytes of the answer", s)
		}
	}
	enhanced := DetectHallucinations("The tower is in Paris.", "How tall is it?", answer, 0.01, true)
	if len(enhanced.Spans) != len(low.Spans) {
		t.Fatalf("with NLI: %d spans, without: %d", len(enhanced.Spans), len(low.Spans))
	}
	for _, s := range enhanced.Spans {
		n := ClassifyNLI("The tower is in Paris. How tall is it?", s.Text)
		severity := map[int]int{0: 1, 1: 2, 2: 4}[n.Label]
		if s.NLILabel != n.Label || s.Severity != severity || s.Explanation == "" {
			t.Fatalf("enhanced span %+v; NLI says %+v", s, n)
		}
	}
	if d := DetectHallucinations("ctx", "", "", 0.5, false); d.Error != "" || d.HasHallucination || d.Confidence != 1 {
		t.Fatalf("empty answer: %+v", d)
	}
}

func sameTasks(t *testing.T, what string, got []TaskResult, want [][]sr.TaskAnswer) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results for %d texts", what, len(got), len(want))
	}
	for i, answers := range want {
		for _, a := range answers {
			switch a.Task {
			case "intent":
				if got[i].Intent != a.Classification.Label || !near(got[i].IntentConfidence, a.Classification.Confidence) {
					t.Fatalf("%s intent %+v, semroute gives %+v", what, got[i], a.Classification)
				}
			case "security":
				if got[i].IsJailbreak != (a.Classification.Label == "jailbreak") || !near(got[i].SecurityConfidence, a.Classification.Confidence) {
					t.Fatalf("%s security %+v, semroute gives %+v", what, got[i], a.Classification)
				}
				if !got[i].IsJailbreak && got[i].ThreatType != "none" {
					t.Fatalf("%s threat_type %q without a threat", what, got[i].ThreatType)
				}
			case "pii":
				if got[i].HasPII != (len(a.Entities) > 0) {
					t.Fatalf("%s pii %+v, semroute gives %+v", what, got[i], a.Entities)
				}
			}
		}
	}
}

func TestLoRAAndUnified(t *testing.T) {
	tasks := []sr.EngineTask{{Name: "intent", Adapter: model(t, "multitask/intent")},
		{Name: "pii", Adapter: model(t, "multitask/pii")}, {Name: "security", Adapter: model(t, "multitask/security")}}
	engine, err := sr.LoadEngine(model(t, "multitask/base"), tasks, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	want, err := engine.Classify(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if !InitLoRA(model(t, "multitask/intent"), model(t, "multitask/pii"), model(t, "multitask/security")) {
		t.Fatal("init_lora_unified_classifier failed")
	}
	got, batch := ClassifyLoRA(texts)
	if batch != len(texts) {
		t.Fatalf("classify_batch_with_lora: batch_size %d", batch)
	}
	sameTasks(t, "classify_batch_with_lora", got, want)
	if _, batch := ClassifyLoRA([]string{"ok", "bad \xff"}); batch != 0 {
		t.Fatal("invalid UTF-8 in a batch was classified")
	}

	labels := []string{"math", "law", "biology", "other"}
	if !InitUnified(model(t, "multitask/base"), model(t, "multitask/intent"), model(t, "multitask/pii"),
		model(t, "multitask/security"), labels) {
		t.Fatal("init_unified_classifier_c failed")
	}
	unified, msg := ClassifyUnified(texts)
	if msg != "" {
		t.Fatalf("classify_unified_batch: %s", msg)
	}
	sameTasks(t, "classify_unified_batch", unified, want)
	for i, answers := range want {
		for _, a := range answers {
			if a.Task == "intent" {
				sameFloats(t, "unified intent probabilities", unified[i].IntentProbs, a.Classification.Probabilities)
			}
		}
	}
}

const mlpJSON = `{"algorithm":"mlp","trained":true,"model_names":["small","medium","large"],"feature_dim":3,
"n_classes":3,"hidden_sizes":[4],"dropout":0.1,"layers":[
{"type":"linear","in_features":3,"out_features":4,"weight":[[0.5,-1,0.25],[1,0.5,-0.5],[-0.25,0.75,1],[0.3,0.2,0.1]],"bias":[0.1,0,-0.1,0.05]},
{"type":"batch_norm","num_features":4,"weight":[1,1.5,0.5,1],"bias":[0,0.1,0,-0.1],"running_mean":[0.1,0,0.2,0],"running_var":[1,2,0.5,1],"eps":1e-5},
{"type":"relu"},{"type":"dropout","p":0.1},
{"type":"linear","in_features":4,"out_features":3,"weight":[[1,-1,0.5,0],[-0.5,1,1,0.5],[0.25,0.25,-1,1]],"bias":[0,0.1,-0.1]}]}`

// mlpReference evaluates mlpJSON's network in float64.
func mlpReference(x []float64) int {
	w1 := [][]float64{{0.5, -1, 0.25}, {1, 0.5, -0.5}, {-0.25, 0.75, 1}, {0.3, 0.2, 0.1}}
	b1 := []float64{0.1, 0, -0.1, 0.05}
	g, b, m, v := []float64{1, 1.5, 0.5, 1}, []float64{0, 0.1, 0, -0.1}, []float64{0.1, 0, 0.2, 0}, []float64{1, 2, 0.5, 1}
	w2 := [][]float64{{1, -1, 0.5, 0}, {-0.5, 1, 1, 0.5}, {0.25, 0.25, -1, 1}}
	b2 := []float64{0, 0.1, -0.1}
	h := make([]float64, 4)
	for o := range h {
		s := b1[o]
		for i := range x {
			s += w1[o][i] * x[i]
		}
		s = (s-m[o])/math.Sqrt(v[o]+1e-5)*g[o] + b[o]
		h[o] = math.Max(s, 0)
	}
	best, bestV := 0, math.Inf(-1)
	for o := range w2 {
		s := b2[o]
		for i := range h {
			s += w2[o][i] * h[i]
		}
		if s >= bestV {
			best, bestV = o, s
		}
	}
	return best
}

func TestMLPSelector(t *testing.T) {
	names := []string{"small", "medium", "large"}
	for _, dtype := range []int{0, 1, 2} {
		m := MLPFromJSON(mlpJSON, dtype)
		if m == nil || !m.Trained() {
			t.Fatalf("dtype %d: the selector did not load", dtype)
		}
		for _, q := range [][]float64{{1, 2, 3}, {-1, 0.5, 0}, {0.2, -2, 1}, {3, -1, -2}} {
			got, ok := m.Select(q)
			if !ok || got != names[mlpReference(q)] {
				t.Fatalf("dtype %d: select(%v) = %q, want %q", dtype, q, got, names[mlpReference(q)])
			}
		}
		if _, ok := m.Select([]float64{1, 2}); ok {
			t.Fatal("a query of the wrong width was answered")
		}
		again := MLPFromJSON(m.JSON(), dtype) // to_json round-trips, layers included
		if again == nil {
			t.Fatal("to_json output does not load")
		}
		if got, _ := again.Select([]float64{1, 2, 3}); got != names[mlpReference([]float64{1, 2, 3})] {
			t.Fatal("the round-tripped selector answers differently")
		}
		again.Close()
		m.Close()
	}
	untrained := NewMLP()
	if untrained.Trained() {
		t.Fatal("candle_mlp_new is trained")
	}
	if _, ok := untrained.Select([]float64{1}); ok {
		t.Fatal("an untrained selector answered")
	}
	untrained.Close()
	for _, bad := range []string{`{}`, `not json`, strings.Replace(mlpJSON, `"mlp"`, `"knn"`, 1),
		strings.Replace(mlpJSON, `"in_features":4`, `"in_features":5`, 1)} {
		if MLPFromJSON(bad, 0) != nil {
			t.Fatalf("bad JSON accepted: %.40s", bad)
		}
	}
}

func TestUnsupportedFailCleanly(t *testing.T) {
	for name, ok := range Unsupported() {
		if !ok {
			t.Errorf("%s did not return its failure value", name)
		}
	}
	if InitPath("init_multimodal_embedding_model", model(t, "intent")) {
		t.Error("init_multimodal_embedding_model succeeded")
	}
	if InitPath("init_deberta_jailbreak_classifier", model(t, "intent")) {
		t.Error("init_deberta_jailbreak_classifier succeeded")
	}
	if ok, code := ValidateText(ptr("bad \xff")); ok || code != 8 {
		t.Errorf("validate_text_input(invalid UTF-8) = %v %d", ok, code)
	}
	if ok, code := ValidateText(nil); ok || code != 1 {
		t.Errorf("validate_text_input(NULL) = %v %d", ok, code)
	}
}

// 16 goroutines on one slot agree with a single caller.
func TestConcurrentCallersOnOneSlot(t *testing.T) {
	ref := reference(t, "intent", nil)
	InitPath("init_mmbert_32k_intent_classifier", model(t, "intent"))
	inGoroutines(t, 16, 50, func(g, i int) string {
		text := texts[(g+i)%len(texts)]
		want, _ := ref.Classify(text)
		if got := Classify("classify_mmbert_32k_intent", ptr(text)); got.Class != want.ClassID || !near(got.Confidence, want.Confidence) {
			return "a concurrent call on " + text + " differed"
		}
		return ""
	})
}

// inGoroutines runs call(g, i) for i < calls in each of n goroutines g; a
// goroutine stops at its first failure (a non-empty message).
func inGoroutines(t *testing.T, n, calls int, call func(g, i int) string) {
	t.Helper()
	var wg sync.WaitGroup
	failures := make(chan string, n)
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				if msg := call(g, i); msg != "" {
					failures <- msg
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Fatal(f)
	}
}

func rssBytes(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	var size, resident int64
	if _, err := fmtSscan(string(data), &size, &resident); err != nil {
		t.Fatal(err)
	}
	return resident * int64(os.Getpagesize())
}

// RSS stays flat over 20 000 calls that allocate results and free them.
func TestNoLeakOver20000Calls(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's shadow memory grows with every allocation: run without -race")
	}
	InitPath("init_modernbert_classifier", model(t, "intent"))
	InitPath("init_mmbert_32k_pii_classifier", model(t, "pii"))
	call := func(i int) {
		text := texts[i%len(texts)]
		switch i % 3 {
		case 0:
			ClassifyWithProbs("classify_modernbert_text_with_probabilities", &text)
		case 1:
			PIITokens(&text)
		default:
			Embed2D(text, "qwen3", 0, 8)
		}
	}
	for i := 0; i < 2000; i++ { // warm-up: pools and caches reach their size
		call(i)
	}
	calls := 20000
	if n, err := strconv.Atoi(os.Getenv("CANDLE_LEAK_CALLS")); err == nil {
		calls = n
	}
	before := rssBytes(t)
	for i := 0; i < calls; i++ {
		call(i)
	}
	after := rssBytes(t)
	if growth := after - before; growth > 8<<20 {
		t.Fatalf("RSS grew by %d KiB over %d calls", growth>>10, calls)
	}
	t.Logf("RSS %d KiB before, %d KiB after %d calls", before>>10, after>>10, calls)
}

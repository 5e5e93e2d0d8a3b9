package candlecompat

// The owned-instance interface against the assertions of upstream's hermetic
// Go tests (a 1-layer ModernBERT and a WordLevel tokenizer written by the
// test), and the legacy functions added after the 2026-08-22 snapshot.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	sr "github.com/semroute/semroute/bindings/go"
)

type tensor struct {
	shape []int
	data  []float32
}

func filled(value float32, shape ...int) tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = value
	}
	return tensor{shape, data}
}

// writeSafetensors writes F32 tensors: an 8-byte little-endian header length,
// the JSON header padded with spaces to 8 bytes, then the data.
func writeSafetensors(t *testing.T, path string, tensors map[string]tensor) {
	names := make([]string, 0, len(tensors))
	for name := range tensors {
		names = append(names, name)
	}
	sort.Strings(names)
	header := map[string]interface{}{}
	var data []byte
	for _, name := range names {
		ts := tensors[name]
		begin := len(data)
		for _, v := range ts.data {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
		header[name] = map[string]interface{}{"dtype": "F32", "shape": ts.shape, "data_offsets": []int{begin, len(data)}}
	}
	h, _ := json.Marshal(header)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	writeFile(t, path, out)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v interface{}) {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, data)
}

var fixtureVocab = []string{"[PAD]", "[UNK]", "hello", "world", "safe", "unsafe", "é", "猫"}

func fixtureConfig() map[string]interface{} {
	return map[string]interface{}{
		"model_type": "modernbert", "vocab_size": 8, "hidden_size": 4, "num_hidden_layers": 1,
		"num_attention_heads": 1, "intermediate_size": 8, "max_position_embeddings": 512, "norm_eps": 1e-5,
		"layer_norm_eps": 1e-5, "pad_token_id": 0, "global_attn_every_n_layers": 1, "global_rope_theta": 10000.0,
		"local_rope_theta": 10000.0, "local_attention": 16, "id2label": map[string]string{"0": "safe", "1": "unsafe"},
		"label2id": map[string]int{"safe": 0, "unsafe": 1}, "classifier_pooling": "mean",
	}
}

// A WordLevel tokenizer over fixtureVocab: whitespace pre-tokenizer, no
// post-processor (no special tokens).
func fixtureTokenizer() map[string]interface{} {
	vocab := map[string]int{}
	for i, w := range fixtureVocab {
		vocab[w] = i
	}
	return map[string]interface{}{
		"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": []interface{}{},
		"normalizer": nil, "pre_tokenizer": map[string]string{"type": "Whitespace"}, "post_processor": nil,
		"decoder": nil, "model": map[string]interface{}{"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
	}
}

func encoderTensors() map[string]tensor {
	return map[string]tensor{
		"model.embeddings.tok_embeddings.weight": filled(1, 8, 4),
		"model.embeddings.norm.weight":           filled(1, 4),
		"model.final_norm.weight":                filled(1, 4),
		"model.layers.0.attn.Wqkv.weight":        filled(1, 12, 4),
		"model.layers.0.attn.Wo.weight":          filled(1, 4, 4),
		"model.layers.0.mlp.Wi.weight":           filled(1, 16, 4),
		"model.layers.0.mlp.Wo.weight":           filled(1, 4, 8),
		"model.layers.0.mlp_norm.weight":         filled(1, 4),
	}
}

// classifierTensors: every weight 1, the bias -1 but 2 for `winner`, so
// that the predicted class is `winner` whatever the encoder gives.
func classifierTensors(winner int) map[string]tensor {
	bias := filled(-1, 2)
	bias.data[winner] = 2
	return map[string]tensor{"classifier.weight": filled(1, 2, 4), "classifier.bias": bias}
}

// ownedFixture writes upstream's fixture model; edit may change its config.
func ownedFixture(t *testing.T, winner int, edit func(map[string]interface{})) string {
	dir := t.TempDir()
	config := fixtureConfig()
	if edit != nil {
		edit(config)
	}
	writeJSON(t, filepath.Join(dir, "config.json"), config)
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), fixtureTokenizer())
	tensors := encoderTensors()
	for k, v := range classifierTensors(winner) {
		tensors[k] = v
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), tensors)
	return dir
}

func mustLoad(t *testing.T, task string, opts InstanceOptions) uint64 {
	t.Helper()
	h, err := Load(task, opts)
	if err != nil {
		t.Fatalf("load %s: %v", task, err)
	}
	t.Cleanup(func() { Close(h) })
	return h
}

func info(t *testing.T, h uint64) Info {
	t.Helper()
	i, err := GetInfo(h)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *InstanceError
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("want a %s error, got %v", code, err)
	}
}

func TestOwnedNativeSequenceLifecycle(t *testing.T) {
	a := mustLoad(t, "sequence", InstanceOptions{ModelPath: ownedFixture(t, 0, nil)})
	b := mustLoad(t, "sequence", InstanceOptions{ModelPath: ownedFixture(t, 1, nil)})
	clone, err := Clone(a)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(clone)
	ia, ib, ic := info(t, a), info(t, b), info(t, clone)
	if ia.ResourceID == ib.ResourceID || ia.ResourceID != ic.ResourceID {
		t.Fatalf("resource ids a %d, b %d, clone %d", ia.ResourceID, ib.ResourceID, ic.ResourceID)
	}
	if ia.Task != "sequence" || ia.MaxInputTokens != 512 || ia.ArchitecturalMaxTokens != 512 || ia.Overflow != "truncate" ||
		!reflect.DeepEqual(ia.Labels, []string{"safe", "unsafe"}) || ia.Device != "cpu" || ia.Precision != "float32" {
		t.Fatalf("info %+v", ia)
	}
	want, err := Sequence(a, "hello world")
	if err != nil || want.Class != 0 || len(want.Probabilities) != 2 || want.Input.InputTokens != 2 {
		t.Fatalf("a: %+v %v", want, err)
	}
	if err := Close(a); err != nil {
		t.Fatal(err)
	}
	if _, err := Sequence(a, "hello world"); !errors.Is(err, ErrInstanceClosed) {
		t.Fatalf("a closed handle: %v", err)
	}
	if err := Close(a); err != nil {
		t.Fatalf("closing twice: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				got, err := Sequence(clone, "hello world")
				if err != nil || !reflect.DeepEqual(got, want) {
					errs <- errors.New("the clone answers differently")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, err := Sequence(b, "hello world"); err != nil || got.Class != 1 {
		t.Fatalf("b: %+v %v", got, err)
	}
}

func TestOwnedNativeHeadBinding(t *testing.T) {
	source := mustLoad(t, "sequence", InstanceOptions{ModelPath: ownedFixture(t, 0, nil)})
	head, err := BindHead(source, ownedFixture(t, 1, nil), "sequence")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(head)
	if info(t, head).ResourceID != info(t, source).ResourceID {
		t.Fatal("a bound head shares its source's resource id")
	}
	Close(source)
	if got, err := Sequence(head, "hello world"); err != nil || got.Class != 1 {
		t.Fatalf("the head after its source closed: %+v %v", got, err)
	}
}

func TestOwnedNativeRejectsNULAndWrongDevice(t *testing.T) {
	dir := ownedFixture(t, 0, nil)
	_, err := Load("sequence", InstanceOptions{ModelPath: dir, Device: "cuda:999"})
	wantCode(t, err, "capability")
	h := mustLoad(t, "sequence", InstanceOptions{ModelPath: dir})
	_, err = Sequence(h, "hello\x00world")
	wantCode(t, err, "configuration")
	_, err = Sequence(h, "bad \xff byte")
	wantCode(t, err, "configuration")
}

// A backbone-only artifact (encoder tensors, no tokenizer, no labels) and
// head-only artifacts (config, tokenizer, classifier), bound in either order.
func TestOwnedNativeHeadlessBackboneOrderAndClose(t *testing.T) {
	backboneDir := t.TempDir()
	config := fixtureConfig()
	delete(config, "id2label")
	delete(config, "label2id")
	writeJSON(t, filepath.Join(backboneDir, "config.json"), config)
	writeSafetensors(t, filepath.Join(backboneDir, "model.safetensors"), encoderTensors())
	head := func(winner int) string {
		dir := t.TempDir()
		writeJSON(t, filepath.Join(dir, "config.json"), fixtureConfig())
		writeJSON(t, filepath.Join(dir, "tokenizer.json"), fixtureTokenizer())
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), classifierTensors(winner))
		return dir
	}
	backbone := mustLoad(t, "backbone", InstanceOptions{ModelPath: backboneDir})
	if i := info(t, backbone); i.Task != "backbone" || len(i.Labels) != 0 {
		t.Fatalf("backbone info %+v", i)
	}
	token, err := BindHead(backbone, head(1), "token")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(token)
	sequence, err := BindHead(backbone, head(1), "sequence")
	if err != nil {
		t.Fatal(err)
	}
	id := info(t, backbone).ResourceID
	if info(t, token).ResourceID != id || info(t, sequence).ResourceID != id {
		t.Fatal("heads share the backbone's resource id")
	}
	Close(backbone)
	if got, err := Sequence(sequence, "hello world"); err != nil || got.Class != 1 {
		t.Fatalf("sequence head after the backbone closed: %+v %v", got, err)
	}
	Close(sequence)
	if got, err := Tokens(token, "hello world"); err != nil || len(got.Spans) != 2 {
		t.Fatalf("token head after the sequence head closed: %+v %v", got, err)
	}
}

func TestOwnedIndependentLabelScoresUseNativeHandle(t *testing.T) {
	dir := ownedFixture(t, 1, func(c map[string]interface{}) { c["problem_type"] = "multi_label_classification" })
	opts := InstanceOptions{ModelPath: dir, ModelType: "modernbert", Overflow: "reject"}
	_, err := Load("sequence", opts)
	wantCode(t, err, "configuration") // a categorical loader refuses a multi-label head
	owner := mustLoad(t, "label_scores", opts)
	clone, err := Clone(owner)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(clone)
	Close(owner)
	if _, err := Score(owner, "hello"); !errors.Is(err, ErrInstanceClosed) {
		t.Fatalf("closed owner: %v", err)
	}
	got, err := Score(clone, "hello world")
	if err != nil || len(got.Scores) != 2 || got.Scores[0]+got.Scores[1] <= 1 {
		t.Fatalf("scores %+v %v", got, err)
	}
	w, err := ClassifyWindows(clone, "hello world safe unsafe é", 3, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Windows) != 2 || w.Windows[0].Start != 0 || w.Windows[0].End != 3 || w.Windows[1].Start != 2 ||
		w.Windows[1].End != 5 || w.ContentTokens != 5 || w.Input.ProcessedTokens != 5 || w.Input.Truncated ||
		len(w.Windows[1].Scores) != 2 {
		t.Fatalf("windows %+v", w)
	}
	_, err = ClassifyWindows(clone, "hello world", 3, 1, false)
	wantCode(t, err, "capability") // classify_windows needs a sequence handle
}

func TestOwnedTokensSpansAndWindows(t *testing.T) {
	h := mustLoad(t, "token", InstanceOptions{ModelPath: ownedFixture(t, 1, nil)})
	text := "é 猫 world"
	got, err := Tokens(h, text)
	if err != nil || got.OffsetUnit != "utf8_bytes" || len(got.Spans) != 3 {
		t.Fatalf("tokens %+v %v", got, err)
	}
	for _, s := range got.Spans {
		if text[s.Start:s.End] != s.Text || s.Label != "unsafe" {
			t.Errorf("span %+v does not slice %q", s, text)
		}
	}
	hello, err := Tokens(h, "hello")
	if err != nil || hello.Input.InputTokens == got.Input.InputTokens {
		t.Fatalf("input tokens of hello %+v vs %+v", hello.Input, got.Input)
	}
	// A byte-level BPE tokenizer splits characters across tokens: spans still
	// slice whole characters.
	pii := mustLoad(t, "token", InstanceOptions{ModelPath: model(t, "pii")})
	for _, text := range []string{"日本語のテキスト 😀 mail me at a@b.co", "Écrivez à josé@exemple.fr 🙂🙂"} {
		got, err := Tokens(pii, text)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range got.Spans {
			if s.Start > s.End || s.End > len(text) || text[s.Start:s.End] != s.Text || !utf8.ValidString(s.Text) {
				t.Errorf("span %+v of %q", s, text)
			}
		}
		ranges, err := TextWindows(pii, text, 4)
		if err != nil || ranges[0][0] != 0 || ranges[len(ranges)-1][1] != len(text) {
			t.Fatalf("text windows %v %v", ranges, err)
		}
		for _, r := range ranges {
			if !utf8.ValidString(text[r[0]:r[1]]) {
				t.Errorf("window %v of %q splits a character", r, text)
			}
		}
	}
	doc := strings.Repeat("hello world ", 11)
	w, err := TokenWindows(h, doc, 8, 2)
	if err != nil || w.ContentTokens != 22 || len(w.Spans) != 22 ||
		!reflect.DeepEqual(w.Windows, [][2]int{{0, 8}, {6, 14}, {12, 20}, {18, 22}}) {
		t.Fatalf("token windows %+v %v", w, err)
	}
}

func TestOwnedBudgetsAndRefusals(t *testing.T) {
	dir := ownedFixture(t, 0, nil)
	_, err := Load("sequence", InstanceOptions{ModelPath: dir, MaxInputTokens: 513})
	wantCode(t, err, "capability")
	_, err = Load("sequence", InstanceOptions{ModelPath: dir, Overflow: "sometimes"})
	wantCode(t, err, "configuration")
	_, err = Load("sequence", InstanceOptions{ModelPath: filepath.Join(dir, "missing")})
	wantCode(t, err, "load")
	for _, task := range []string{"guard", "generative"} {
		_, err = Load(task, InstanceOptions{ModelPath: dir})
		wantCode(t, err, "capability")
	}
	h := mustLoad(t, "sequence", InstanceOptions{ModelPath: dir, MaxInputTokens: 4, Overflow: "reject"})
	_, err = Sequence(h, "hello world hello world hello")
	wantCode(t, err, "input_limit")
	_, err = Score(h, "hello")
	wantCode(t, err, "capability")
	for _, err := range Unimplemented(h) {
		wantCode(t, err, "capability")
	}
	cut := mustLoad(t, "sequence", InstanceOptions{ModelPath: dir, MaxInputTokens: 4})
	got, err := Sequence(cut, "hello world hello world hello")
	if err != nil || got.Input != (InputMetadata{5, 4, true}) {
		t.Fatalf("truncated input %+v %v", got.Input, err)
	}
	// With two special tokens around every text: a budget below them fails
	// the load, a budget of exactly them reads them alone.
	special := ownedFixture(t, 0, nil)
	tok := fixtureTokenizer()
	tok["post_processor"] = map[string]interface{}{"type": "BertProcessing", "sep": []interface{}{"[PAD]", 0},
		"cls": []interface{}{"[UNK]", 1}}
	writeJSON(t, filepath.Join(special, "tokenizer.json"), tok)
	_, err = Load("sequence", InstanceOptions{ModelPath: special, MaxInputTokens: 1})
	wantCode(t, err, "capability")
	if !strings.Contains(err.Error(), "2 special tokens") {
		t.Fatalf("budget 1: %v", err)
	}
	two := mustLoad(t, "sequence", InstanceOptions{ModelPath: special, MaxInputTokens: 2})
	if got, err := Sequence(two, "hello world"); err != nil || got.Input != (InputMetadata{4, 2, true}) {
		t.Fatalf("budget 2: %+v %v", got.Input, err)
	}
	if _, err := GetInfo(1 << 60); !errors.Is(err, ErrInstanceClosed) {
		t.Fatalf("an unknown handle: %v", err)
	}
}

func TestOwnedEmbeddingAndTextWindows(t *testing.T) {
	// Upstream's Rust fixture: embeddings 0.1·((i mod 4) + 1), so that the
	// normalized states are not all zero.
	dir := ownedFixture(t, 0, nil)
	tensors := encoderTensors()
	for i := range tensors["model.embeddings.tok_embeddings.weight"].data {
		tensors["model.embeddings.tok_embeddings.weight"].data[i] = 0.1 * float32(i%4+1)
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), tensors)
	h := mustLoad(t, "embedding", InstanceOptions{ModelPath: dir, ModelType: "mmbert"})
	if i := info(t, h); i.Task != "embedding" || !reflect.DeepEqual(i.Modalities, []string{"text"}) ||
		!reflect.DeepEqual(i.AvailableDimensions, []int{4}) {
		t.Fatalf("embedding info %+v", i)
	}
	e, err := Embed(h, "hello world", 0, 0)
	if err != nil || len(e.Values) != 4 || e.Input.InputTokens != 2 {
		t.Fatalf("embedding %+v %v", e, err)
	}
	norm := 0.0
	for _, v := range e.Values {
		norm += float64(v * v)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Fatalf("norm %v", norm)
	}
	if e2, err := Embed(h, "hello world", 2, 0); err != nil || len(e2.Values) != 2 {
		t.Fatalf("dimension 2: %+v %v", e2, err)
	}
	_, err = Embed(h, "hello", 5, 0)
	wantCode(t, err, "capability")
	text := "hello world safe unsafe é"
	ranges, err := TextWindows(h, text, 2)
	if err != nil || !reflect.DeepEqual(ranges, [][2]int{{0, 12}, {12, 24}, {24, len(text)}}) {
		t.Fatalf("text windows %v %v", ranges, err)
	}
}

func TestOwnedNLIAndHallucination(t *testing.T) {
	nliDir := t.TempDir()
	config := fixtureConfig()
	config["id2label"] = map[string]string{"0": "entailment", "1": "neutral", "2": "contradiction"}
	delete(config, "label2id")
	writeJSON(t, filepath.Join(nliDir, "config.json"), config)
	writeJSON(t, filepath.Join(nliDir, "tokenizer.json"), fixtureTokenizer())
	tensors := encoderTensors()
	tensors["classifier.weight"] = filled(1, 3, 4)
	tensors["classifier.bias"] = tensor{[]int{3}, []float32{-1, -1, 2}}
	writeSafetensors(t, filepath.Join(nliDir, "model.safetensors"), tensors)
	nli := mustLoad(t, "nli", InstanceOptions{ModelPath: nliDir, MaxInputTokens: 6})
	long := strings.Repeat("hello ", 600)
	got, err := InstanceNLI(nli, long, "world")
	if err != nil || got.Class != 2 || !got.Input.Truncated && got.Input.ProcessedTokens > 6 {
		t.Fatalf("nli %+v %v", got, err)
	}
	_, err = InstanceNLI(nli, "hello", long)
	wantCode(t, err, "input_limit")

	haluDir := ownedFixture(t, 1, func(c map[string]interface{}) { delete(c, "id2label"); delete(c, "label2id") })
	halu := mustLoad(t, "hallucination", InstanceOptions{ModelPath: haluDir})
	if i := info(t, halu); !reflect.DeepEqual(i.Labels, []string{"SUPPORTED", "HALLUCINATED"}) {
		t.Fatalf("hallucination labels %v", i.Labels)
	}
	answer := "é 猫"
	d, err := InstanceDetect(halu, "hello world", "safe", answer, 0.5)
	if err != nil || !d.HasHallucination || len(d.Spans) != 1 || d.OffsetUnit != "utf8_bytes" {
		t.Fatalf("detect %+v %v", d, err)
	}
	if s := d.Spans[0]; s.Start != 0 || s.End != len(answer) || answer[s.Start:s.End] != s.Text || s.Label != "HALLUCINATED" {
		t.Fatalf("span %+v", s)
	}
}

// ---- legacy additions (each in a process of its own: the slots are process-wide)

func TestLegacyAdditions(t *testing.T) {
	if os.Getenv("CANDLE_ADDITIONS_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLegacyAdditions$", "-test.v")
		cmd.Env = append(os.Environ(), "CANDLE_ADDITIONS_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestLegacyAdditions") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	intent := model(t, "intent")
	if InitWithContext("intent", intent, 1<<20) {
		t.Fatal("a limit beyond the model's positions must fail the load")
	}
	if !InitWithContext("intent", intent, 16) || !InitWithContext("feedback", intent, 0) {
		t.Fatal("init with context failed")
	}
	for _, kind := range []string{"factcheck", "jailbreak", "modality"} {
		if !InitWithContext(kind, intent, 0) {
			t.Fatalf("init %s with context failed", kind)
		}
	}
	if !InitWithContext("pii", model(t, "pii"), 0) {
		t.Fatal("init pii with context failed")
	}
	long := strings.Repeat("the contract binds the landlord ", 20)
	want := reference(t, "intent", &sr.Options{MaxLength: 16})
	w, err := want.Classify(long)
	if err != nil {
		t.Fatal(err)
	}
	if got := Classify("classify_mmbert_32k_intent", ptr(long)); got.Class != w.ClassID || !near(got.Confidence, w.Confidence) {
		t.Fatalf("a 16-token intent classifier: %+v, semroute %+v", got, w)
	}
	full := reference(t, "intent", &sr.Options{MaxLength: 512})
	f, _ := full.Classify(texts[0])
	got := ClassifyWithProbs("classify_mmbert_32k_feedback_with_probabilities", ptr(texts[0]))
	sameFloats(t, "feedback probabilities", got.Probs, f.Probabilities)
	if got := ClassifyWithProbs("classify_feedback_text_with_probabilities", ptr(texts[0])); got.Class != -1 {
		t.Fatalf("an uninitialised feedback detector answers class -1, got %+v", got)
	}

	if _, err := GetTextWindows("hello", 0); err == nil {
		t.Fatal("text windows before the similarity model")
	}
	if EmbeddingTextExceedsWindow("hello", "qwen3") != -1 {
		t.Fatal("a window check before the embedding models")
	}
	if !InitEmbeddingModels(model(t, "qwen3"), "", "") {
		t.Fatal("init_embedding_models_with_mmbert failed")
	}
	if got := EmbeddingTextExceedsWindow("hello", "qwen3"); got != 0 {
		t.Fatalf("a short text exceeds the window: %d", got)
	}
	if got := EmbeddingTextExceedsWindow(strings.Repeat("word ", 200), "qwen3"); got != 1 {
		t.Fatalf("200 words fit a 128-token window: %d", got)
	}
	if got := EmbeddingTextExceedsWindow("hello", "gemma"); got != -1 {
		t.Fatalf("gemma is not loaded: %d", got)
	}
	if !InitPath("init_similarity_model", model(t, "bert")) {
		t.Fatal("init_similarity_model failed")
	}
	text := strings.Repeat("one two three four five six seven eight ", 8)
	ranges, err := GetTextWindows(text, 10)
	if err != nil || len(ranges) < 3 || ranges[0][0] != 0 || ranges[len(ranges)-1][1] != len(text) {
		t.Fatalf("text windows %v %v", ranges, err)
	}
	for i := 1; i < len(ranges); i++ {
		if ranges[i][0] <= ranges[i-1][0] || ranges[i][0] >= ranges[i-1][1] {
			t.Fatalf("windows must advance and overlap: %v", ranges)
		}
	}
	if one, err := GetTextWindows("short text", 0); err != nil || !reflect.DeepEqual(one, [][2]int{{0, 10}}) {
		t.Fatalf("a text that fits: %v %v", one, err)
	}
}

// Upstream's pair fixture: the model rewritten as a Matryoshka cross-encoder
// whose first head layer is zero, so the score is 2·GELU(1) + 2.
func pairFixture(t *testing.T) string {
	dir := t.TempDir()
	config := fixtureConfig()
	delete(config, "id2label")
	delete(config, "label2id")
	config["architectures"] = []string{"ModernBertModel"}
	config["representation_contract"] = map[string]interface{}{"version": 1, "pooling": "cls",
		"intermediate_normalization": "final_norm", "final_normalization": "final_norm", "head_dtype": "float32"}
	writeJSON(t, filepath.Join(dir, "config.json"), config)
	tok := fixtureTokenizer()
	tok["post_processor"] = map[string]interface{}{"type": "BertProcessing", "sep": []interface{}{"[PAD]", 0},
		"cls": []interface{}{"[UNK]", 1}}
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), tok)
	writeJSON(t, filepath.Join(dir, "matryoshka_config.json"), map[string]interface{}{"layer_indices": []int{1},
		"dim_indices": []int{4}, "hidden_size": 4, "num_layers": 1, "pooling": "cls", "has_final_norm": true})
	tensors := map[string]tensor{}
	for name, v := range encoderTensors() {
		tensors[strings.TrimPrefix(name, "model.")] = v
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), tensors)
	writeSafetensors(t, filepath.Join(dir, "classification_heads.safetensors"), map[string]tensor{
		"1.4.0.weight": filled(0, 2, 4), "1.4.0.bias": filled(1, 2), "1.4.3.weight": filled(1, 1, 2), "1.4.3.bias": filled(2, 1)})
	return dir
}

func TestOwnedPairScorerNativeContractAndLifecycle(t *testing.T) {
	dir := pairFixture(t)
	opts := InstanceOptions{ModelPath: dir, MaxInputTokens: 7, Overflow: "reject"}
	owner, err := LoadPairScorer(opts, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	scorer, err := Clone(owner)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(scorer)
	Close(owner)
	if _, err := ScorePairs(owner, []TextPair{{"hello", "world"}}); !errors.Is(err, ErrInstanceClosed) {
		t.Fatalf("closed owner: %v", err)
	}
	got, err := ScorePairs(scorer, []TextPair{{"hello world", "safe unsafe"}})
	if err != nil || len(got.Scores) != 1 || math.Abs(float64(got.Scores[0])-3.682689492) > 1e-6 ||
		got.Inputs[0] != (InputMetadata{7, 7, false}) {
		t.Fatalf("pair scores %+v %v", got, err)
	}
	i := info(t, scorer)
	if i.Task != "pair_scores" || i.PairScorer == nil || *i.PairScorer != (PairSelection{1, 4}) || len(i.Labels) != 0 {
		t.Fatalf("pair scorer info %+v", i)
	}
	_, err = ScorePairs(scorer, []TextPair{{"hello world", "safe unsafe é"}})
	wantCode(t, err, "input_limit")
	_, err = ScorePairs(scorer, nil)
	wantCode(t, err, "configuration")
	_, err = ScorePairs(scorer, []TextPair{{" ", "world"}})
	wantCode(t, err, "configuration")
	_, err = LoadPairScorer(opts, 0, 3)
	if err == nil {
		t.Fatal("an untrained exit must fail to load")
	}
	_, err = LoadPairScorer(InstanceOptions{ModelPath: dir, Overflow: "truncate"}, 0, 0)
	wantCode(t, err, "capability")
}

func TestOwnedEmbeddingDescriptorIdentityAndLifecycle(t *testing.T) {
	embeddingFixture := func(scale float32) string {
		dir := ownedFixture(t, 0, nil)
		tensors := encoderTensors()
		for i := range tensors["model.embeddings.tok_embeddings.weight"].data {
			tensors["model.embeddings.tok_embeddings.weight"].data[i] = scale * float32(i%4+1)
		}
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), tensors)
		return dir
	}
	dir := embeddingFixture(0.1)
	h := mustLoad(t, "embedding", InstanceOptions{ModelPath: dir, ModelType: "mmbert"})
	full, err := Descriptor(h, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Layer, Dimension int
		ModelType        string `json:"model_type"`
		Artifacts        []struct{ Role, Sha256 string }
	}
	if err := json.Unmarshal([]byte(full), &d); err != nil || d.Layer != 1 || d.Dimension != 4 || d.ModelType != "mmbert" ||
		len(d.Artifacts) < 2 {
		t.Fatalf("descriptor %s %v", full, err)
	}
	if same, err := Descriptor(h, 1, 4); err != nil || same != full {
		t.Fatalf("(1, 4) must equal the default descriptor: %s %v", same, err)
	}
	if narrow, err := Descriptor(h, 1, 2); err != nil || !strings.Contains(narrow, `"dimension":2`) {
		t.Fatalf("(1, 2): %s %v", narrow, err)
	}
	for _, bad := range [][2]int{{2, 4}, {1, 5}} {
		if _, err := Descriptor(h, bad[0], bad[1]); err == nil {
			t.Fatalf("descriptor %v must be rejected", bad)
		}
	}
	other := mustLoad(t, "embedding", InstanceOptions{ModelPath: embeddingFixture(0.2), ModelType: "mmbert"})
	if o, _ := Descriptor(other, 0, 0); o == full {
		t.Fatal("other weights must give other artifacts")
	}
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if again, _ := Descriptor(h, 0, 0); again != full {
		t.Fatal("the descriptor was captured at load")
	}
	reloaded := mustLoad(t, "embedding", InstanceOptions{ModelPath: moved, ModelType: "mmbert"})
	if r, _ := Descriptor(reloaded, 0, 0); r != full {
		t.Fatalf("a moved directory keeps its identity:\n%s\n%s", r, full)
	}
	clone, err := Clone(h)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(clone)
	Close(h)
	if _, err := Descriptor(h, 0, 0); !errors.Is(err, ErrInstanceClosed) {
		t.Fatalf("closed: %v", err)
	}
	if c, err := Descriptor(clone, 0, 0); err != nil || c != full {
		t.Fatalf("the clone: %s %v", c, err)
	}
	seq := mustLoad(t, "sequence", InstanceOptions{ModelPath: ownedFixture(t, 0, nil)})
	_, err = Descriptor(seq, 0, 0)
	wantCode(t, err, "capability")
}

// A handle closed while calls on it are in flight: each call answers (its
// model lives until it returns) or finds the handle closed; none fails else.
func TestOwnedCloseWhileCallsAreInFlight(t *testing.T) {
	h, err := Load("sequence", InstanceOptions{ModelPath: model(t, "intent"), MaxInputTokens: 512})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("the tenant asked whether the contract binds the landlord ", 40)
	var wg sync.WaitGroup
	started := make(chan struct{}, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if i == 1 {
					started <- struct{}{}
				}
				_, err := Sequence(h, text)
				if errors.Is(err, ErrInstanceClosed) {
					return
				}
				if err != nil {
					t.Errorf("a call in flight failed: %v", err)
					return
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-started
	}
	Close(h)
	wg.Wait()
	if _, err := Sequence(h, text); !errors.Is(err, ErrInstanceClosed) {
		t.Fatalf("after close: %v", err)
	}
}

//go:build cgo

package semroute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The models and the CLI's answers for them come from scripts/test-go.sh.
var modelsDir = os.Getenv("SEMROUTE_TEST_MODELS")

func TestMain(m *testing.M) {
	if modelsDir == "" {
		fmt.Fprintln(os.Stderr, "SEMROUTE_TEST_MODELS is not set: run scripts/test-go.sh, which makes the test models")
		os.Exit(1)
	}
	code := m.Run()
	stopSidecar()
	os.Exit(code)
}

func load(t testing.TB, name string, opts *Options) *Model {
	t.Helper()
	m, err := Load(filepath.Join(modelsDir, name), opts)
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func readJSON(t *testing.T, name string, v interface{}) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(modelsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-5 }

func TestClassifyEqualsTheCLI(t *testing.T) {
	m := load(t, "intent", nil)
	info := m.Info()
	if info.Task != TaskSequenceClassification || info.ModelType != "modernbert" || len(info.Labels) != 4 {
		t.Fatalf("Info = %+v", info)
	}
	checkClassifyEqualsTheCLI(t, m, info.Labels)
}

// cliClassified is what `semroute classify --json` answered for intent.json's texts.
type cliClassified struct {
	Results []struct {
		Text          string             `json:"text"`
		Label         string             `json:"label"`
		ClassID       int                `json:"class_id"`
		Confidence    float64            `json:"confidence"`
		Probabilities map[string]float64 `json:"probabilities"`
	} `json:"results"`
}

func cliClassifications(t *testing.T) cliClassified {
	var want cliClassified
	readJSON(t, "intent.json", &want)
	return want
}

// checkClassifyEqualsTheCLI: the answers of m (in process or a sidecar's)
// for intent.json's texts are the CLI's.
func checkClassifyEqualsTheCLI(t *testing.T, m SequenceClassifier, labels []string) {
	want := cliClassifications(t)
	var texts []string
	for _, r := range want.Results {
		texts = append(texts, r.Text)
	}
	got, err := m.ClassifyBatch(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want.Results {
		g := got[i]
		if g.Label != w.Label || g.ClassID != w.ClassID || !near(float64(g.Confidence), w.Confidence) {
			t.Errorf("%q: got %+v, want %+v", w.Text, g, w)
		}
		for k, label := range labels {
			if !near(float64(g.Probabilities[k]), w.Probabilities[label]) {
				t.Errorf("%q: P(%s) = %v, want %v", w.Text, label, g.Probabilities[k], w.Probabilities[label])
			}
		}
		single, err := m.Classify(w.Text)
		if err != nil || single.Label != g.Label || !near(float64(single.Confidence), float64(g.Confidence)) {
			t.Errorf("Classify(%q) = %+v, %v; batch gave %+v", w.Text, single, err, g)
		}
	}
}

func TestClassifyTokensEqualsTheCLI(t *testing.T) { checkTokensEqualTheCLI(t, load(t, "pii", nil)) }

func checkTokensEqualTheCLI(t *testing.T, m TokenClassifier) {
	var want struct {
		Results []struct {
			Text     string `json:"text"`
			Entities []struct {
				Type  string  `json:"type"`
				Begin int     `json:"begin"`
				End   int     `json:"end"`
				Text  string  `json:"text"`
				Score float64 `json:"score"`
			} `json:"entities"`
			Tokens []struct {
				ID    int    `json:"id"`
				Label string `json:"label"`
				Begin int    `json:"begin"`
				End   int    `json:"end"`
			} `json:"tokens"`
		} `json:"results"`
	}
	readJSON(t, "pii.json", &want)
	for _, w := range want.Results {
		got, err := m.ClassifyTokens(w.Text)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Entities) != len(w.Entities) || len(got.Tokens) != len(w.Tokens) {
			t.Fatalf("%q: %d entities, %d tokens; want %d, %d", w.Text, len(got.Entities), len(got.Tokens),
				len(w.Entities), len(w.Tokens))
		}
		for j, e := range w.Entities {
			g := got.Entities[j]
			if g.Type != e.Type || g.Begin != e.Begin || g.End != e.End || g.Text != e.Text || !near(float64(g.Score), e.Score) {
				t.Errorf("entity %d: got %+v, want %+v", j, g, e)
			}
			if w.Text[g.Begin:g.End] != g.Text {
				t.Errorf("entity %d: offsets do not select its text", j)
			}
		}
		for j, tok := range w.Tokens {
			g := got.Tokens[j]
			if g.TokenID != tok.ID || g.Label != tok.Label || g.Begin != tok.Begin || g.End != tok.End {
				t.Errorf("token %d: got %+v, want %+v", j, g, tok)
			}
		}
	}
}

func TestEmbeddingsEqualTheCLI(t *testing.T) {
	m := load(t, "intent", &Options{Task: TaskEmbedding})
	texts := checkEmbeddingsEqualTheCLI(t, m)
	matches, err := m.TopK(context.Background(), texts[0], texts, 2)
	if err != nil || len(matches) != 2 || matches[0].Index != 0 || !near(float64(matches[0].Score), 1) {
		t.Errorf("TopK = %+v, %v", matches, err)
	}
	small := load(t, "intent", &Options{Task: TaskEmbedding, Dimension: 8})
	if e, err := small.Embed(texts[0]); err != nil || len(e) != 8 {
		t.Errorf("Matryoshka embedding: %d values, %v", len(e), err)
	}
}

// checkEmbeddingsEqualTheCLI compares embed.json's embeddings and their
// cosine with m's, and returns the texts.
func checkEmbeddingsEqualTheCLI(t *testing.T, m TextEmbedder) []string {
	var want struct {
		Dimension  int         `json:"dimension"`
		Embeddings [][]float64 `json:"embeddings"`
		Cosine     [][]float64 `json:"cosine"`
	}
	readJSON(t, "embed.json", &want)
	texts := readLines(t, "embed.txt")
	got, err := m.EmbedBatch(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if len(got[i]) != want.Dimension {
			t.Fatalf("text %d: dimension %d, want %d", i, len(got[i]), want.Dimension)
		}
		for j, v := range want.Embeddings[i] {
			if !near(float64(got[i][j]), v) {
				t.Fatalf("text %d dim %d: %v, want %v", i, j, got[i][j], v)
			}
		}
	}
	sim, err := m.Similarity(texts[0], texts[1])
	if err != nil || !near(float64(sim), want.Cosine[0][1]) {
		t.Errorf("Similarity = %v, %v; want %v", sim, err, want.Cosine[0][1])
	}
	return texts
}

func readLines(t *testing.T, name string) []string {
	data, err := os.ReadFile(filepath.Join(modelsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

func TestTokenize(t *testing.T) {
	m := load(t, "intent", nil)
	text := "Héllo wörld"
	tokens, err := m.Tokenize(text, true)
	if err != nil {
		t.Fatal(err)
	}
	n := len(tokens.IDs)
	if n < 3 || tokens.Tokens[0] != "[CLS]" || tokens.Offsets[n-2][1] != len(text) {
		t.Fatalf("Tokenize = %+v", tokens)
	}
	plain, err := m.Tokenize(text, false)
	if err != nil || len(plain.IDs) != n-2 {
		t.Fatalf("without special tokens: %+v, %v", plain, err)
	}
}

func TestBadInputIsAnError(t *testing.T) {
	m := load(t, "intent", nil)
	checkBadTextsAreErrors(t, m)
	if _, err := m.Embed("x"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("embedding with a classifier: %v", err)
	}
	if _, err := m.ClassifyPairs(context.Background(), []string{"a"}, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unequal pairs: %v", err)
	}
	if r, err := m.ClassifyBatch(context.Background(), nil); err != nil || len(r) != 0 {
		t.Errorf("empty batch: %v, %v", r, err)
	}
	if _, err := Load(filepath.Join(modelsDir, "missing"), nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing model: %v", err)
	}
	if _, err := Load(filepath.Join(modelsDir, "intent"), &Options{Device: "tpu"}); err == nil {
		t.Errorf("unknown device accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.ClassifyBatch(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestOneModelManyGoroutines(t *testing.T) {
	m := load(t, "intent", nil)
	texts := []string{"integrate x^2", "a binding contract", "cell biology", "hello"}
	want := make([]Classification, len(texts))
	for i, text := range texts {
		var err error
		if want[i], err = m.Classify(text); err != nil {
			t.Fatal(err)
		}
	}
	classifyConcurrently(t, m, texts, want, 50, func(got, want Classification) bool {
		return got.Label == want.Label && near(float64(got.Confidence), float64(want.Confidence))
	})
}

// classifyConcurrently has 16 goroutines classify texts[(g+i) % len] `calls`
// times each and reports every answer that is not `same` as want.
func classifyConcurrently(t *testing.T, m SequenceClassifier, texts []string, want []Classification, calls int,
	same func(got, want Classification) bool) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				k := (g + i) % len(texts)
				got, err := m.Classify(texts[k])
				if err != nil || !same(got, want[k]) {
					errs <- fmt.Errorf("goroutine %d call %d: %+v, %v; want %+v", g, i, got, err, want[k])
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Goroutines sending one text each through a model with dynamic batching get
// exactly the answers of a model without it.
func TestBatchingEqualsUnbatched(t *testing.T) {
	plain := load(t, "intent", nil)
	batched := load(t, "intent", &Options{MaxBatch: 8, MaxWait: 2 * time.Millisecond})
	texts := []string{"integrate x^2", "a binding contract", "cell biology", "hello", "the court ruled", "dna"}
	want := make([]Classification, len(texts))
	for i, text := range texts {
		var err error
		if want[i], err = plain.Classify(text); err != nil {
			t.Fatal(err)
		}
	}
	classifyConcurrently(t, batched, texts, want, 20, func(got, want Classification) bool {
		return reflect.DeepEqual(got, want)
	})
	if _, err := Load(filepath.Join(modelsDir, "intent"), &Options{MaxBatch: 8, MaxWait: 2 * time.Second}); err == nil {
		t.Error("MaxWait of 2 s accepted")
	}
}

func TestCloseWaitsForCallsInFlight(t *testing.T) {
	m, err := Load(filepath.Join(modelsDir, "intent"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	started := make(chan struct{}, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				_, err := m.ClassifyBatch(context.Background(), []string{"a fairly long text " + strconv.Itoa(i), "b"})
				if i == 0 {
					started <- struct{}{}
				}
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("call in flight: %v", err)
					return
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-started
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := m.Classify("after"); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if _, err := m.Tokenize("after", true); !errors.Is(err, ErrClosed) {
		t.Errorf("Tokenize after Close: %v", err)
	}
}

// residentBytes is this process's resident set size.
func residentBytes(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	fields := strings.Fields(string(data))
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func TestNoLeakOverManyCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	m := load(t, "pii", nil)
	call := func() {
		if _, err := m.ClassifyTokens("Write to jane.doe@example.com today"); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Classify("\xff"); err == nil {
			t.Fatal("invalid UTF-8 accepted")
		}
	}
	for i := 0; i < 2000; i++ {
		call()
	}
	before := residentBytes(t)
	for i := 0; i < 10000; i++ { // two calls each
		call()
	}
	after := residentBytes(t)
	t.Logf("RSS %d MB -> %d MB over 20000 calls (10000 of each kind)", before>>20, after>>20)
	if after-before > 16<<20 {
		t.Errorf("RSS grew by %d MB over 20000 calls (10000 of each kind)", (after-before)>>20)
	}
}

// A copy of the intent model whose config.json declares a multi-label head:
// its scores are the same logits through a sigmoid each, so the difference
// of two labels' logits equals the difference of their log-softmax.
func TestMultiLabelScores(t *testing.T) {
	src, dir := filepath.Join(modelsDir, "intent"), t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "config.json" {
			var config map[string]interface{}
			if err := json.Unmarshal(data, &config); err != nil {
				t.Fatal(err)
			}
			config["problem_type"] = "multi_label_classification"
			if data, err = json.Marshal(config); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	single := load(t, "intent", nil)
	multi, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer multi.Close()
	if single.Info().MultiLabel || !multi.Info().MultiLabel {
		t.Fatalf("MultiLabel: single %v, multi %v", single.Info().MultiLabel, multi.Info().MultiLabel)
	}
	text := "Is this contract binding?"
	p, err := single.Classify(text)
	if err != nil {
		t.Fatal(err)
	}
	s, err := multi.Classify(text)
	if err != nil {
		t.Fatal(err)
	}
	if s.ClassID != p.ClassID || s.Confidence != s.Probabilities[s.ClassID] {
		t.Errorf("multi-label %+v, single-label %+v", s, p)
	}
	logit := func(x float32) float64 { return math.Log(float64(x) / (1 - float64(x))) }
	for i := range s.Probabilities {
		got := logit(s.Probabilities[i]) - logit(s.Probabilities[0])
		want := math.Log(float64(p.Probabilities[i])) - math.Log(float64(p.Probabilities[0]))
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("label %d: logit difference %v, log-softmax difference %v", i, got, want)
		}
	}
}

func TestInputUsageAndOverflow(t *testing.T) {
	long := "one two three four five six seven eight nine ten eleven twelve"
	m := load(t, "intent", &Options{MaxLength: 8})
	got, err := m.ClassifyBatch(context.Background(), []string{"short", long})
	if err != nil {
		t.Fatal(err)
	}
	if u := got[0].Input; u.Truncated || u.InputTokens != u.ProcessedTokens || u.InputTokens == 0 {
		t.Errorf("short text: %+v", u)
	}
	if u := got[1].Input; !u.Truncated || u.ProcessedTokens != 8 || u.InputTokens <= 8 {
		t.Errorf("long text: %+v", u)
	}
	pii := load(t, "pii", &Options{MaxLength: 8})
	spans, err := pii.ClassifyTokens(long)
	if err != nil || !spans.Input.Truncated {
		t.Errorf("ClassifyTokens: %+v, %v", spans.Input, err)
	}
	strict := load(t, "intent", &Options{MaxLength: 8, Overflow: OverflowReject})
	if _, err := strict.Classify("short"); err != nil {
		t.Errorf("a text that fits: %v", err)
	}
	var e *Error
	if _, err := strict.Classify(long); !errors.As(err, &e) || e.Code != CodeTooLong {
		t.Errorf("reject: got %v, want CodeTooLong", err)
	}
}

func TestClassifyWindows(t *testing.T) {
	m := load(t, "intent", nil)
	document := strings.Repeat("The tenant asked whether the contract binds the landlord. ", 30)
	doc, err := m.ClassifyWindows(document, WindowOptions{Size: 32, Overlap: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Windows) < 3 || doc.Windows[0].TokenBegin != 0 || doc.Windows[len(doc.Windows)-1].TokenEnd != doc.ContentTokens {
		t.Fatalf("windows %+v over %d tokens", doc.Windows, doc.ContentTokens)
	}
	for i, w := range doc.Windows {
		if i > 0 && w.TokenBegin != doc.Windows[i-1].TokenEnd-4 {
			t.Errorf("window %d starts at %d, want an overlap of 4 with %+v", i, w.TokenBegin, doc.Windows[i-1])
		}
		if w.End > len(document) || w.Begin >= w.End || len(w.Classification.Probabilities) != 4 {
			t.Errorf("window %d: %+v", i, w)
		}
	}
	// A document that fits is one window equal to Classify.
	short := "Is this contract binding?"
	one, err := m.ClassifyWindows(short, WindowOptions{})
	c, err2 := m.Classify(short)
	if err != nil || err2 != nil || len(one.Windows) != 1 || one.Windows[0].Classification.Label != c.Label ||
		!near(float64(one.Windows[0].Classification.Confidence), float64(c.Confidence)) {
		t.Errorf("one window %+v (%v), Classify %+v (%v)", one, err, c, err2)
	}
	var e *Error
	if _, err := m.ClassifyWindows(document, WindowOptions{MaxDocumentTokens: 10}); !errors.As(err, &e) || e.Code != CodeTooLong {
		t.Errorf("a document over MaxDocumentTokens: %v", err)
	}
	if _, err := m.ClassifyWindows(document, WindowOptions{Size: -1}); !errors.As(err, &e) || e.Code != CodeInvalidArgument {
		t.Errorf("a negative size: %v", err)
	}
}

func TestClassifyTokenWindows(t *testing.T) {
	m := load(t, "pii", nil)
	short := "Contact john.smith@example.com or Jane Doe."
	whole, err := m.ClassifyTokens(short)
	if err != nil {
		t.Fatal(err)
	}
	windowed, err := m.ClassifyTokenWindows(short, WindowOptions{})
	if err != nil || !reflect.DeepEqual(windowed.Entities, whole.Entities) || len(windowed.Tokens) != len(whole.Tokens) {
		t.Errorf("a text that fits: %+v (%v), want %+v", windowed, err, whole)
	}
	document := strings.Repeat("Write to mary.major@example.org about invoice 7. ", 20)
	long, err := m.ClassifyTokenWindows(document, WindowOptions{Size: 24, Overlap: 6})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range long.Entities {
		if document[e.Begin:e.End] != e.Text {
			t.Errorf("entity %+v does not slice the document", e)
		}
	}
	if long.Input.Truncated || long.Input.ProcessedTokens <= 24 {
		t.Errorf("windows read the whole document: %+v", long.Input)
	}
}

func TestBindHead(t *testing.T) {
	whole := load(t, "intent", nil)
	encoder := load(t, "intent", &Options{Task: TaskEncoder})
	if info := encoder.Info(); info.Task != TaskEncoder || len(info.Labels) != 0 {
		t.Fatalf("encoder info %+v", info)
	}
	head, err := encoder.BindHead(filepath.Join(modelsDir, "intent"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer head.Close()
	pii, err := head.BindHead(filepath.Join(modelsDir, "pii"), nil) // the PII head on the intent encoder
	if err != nil {
		t.Fatal(err)
	}
	defer pii.Close()
	if !head.SharesEncoder(encoder) || !pii.SharesEncoder(encoder) || whole.SharesEncoder(encoder) {
		t.Fatal("bound heads must share the encoder they were bound to, and only that one")
	}
	if info := pii.Info(); info.Task != TaskTokenClassification || len(info.Labels) != 5 {
		t.Fatalf("pii head info %+v", info)
	}
	encoder.Close() // the heads keep the encoder alive
	if encoder.SharesEncoder(head) {
		t.Error("a closed model shares nothing")
	}
	text := "What is the derivative of x^2?"
	got, err := head.Classify(text)
	if err != nil {
		t.Fatal(err)
	}
	want, err := whole.Classify(text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Probabilities, want.Probabilities) {
		t.Errorf("bound head %v, whole model %v", got.Probabilities, want.Probabilities)
	}
	if _, err := pii.ClassifyTokens("Contact john.smith@example.com"); err != nil {
		t.Error(err)
	}
	if _, err := encoder.BindHead(filepath.Join(modelsDir, "intent"), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("binding to a closed model: %v", err)
	}
	if _, err := head.BindHead(filepath.Join(modelsDir, "intent"), &Options{Task: TaskEmbedding}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("an embedding head: %v", err)
	}
}

func TestScorePairsAndRerank(t *testing.T) {
	var cli struct {
		Query  string
		Ranked []struct {
			Index    int
			Document string
			Score    float32
		}
	}
	data, err := os.ReadFile(filepath.Join(modelsDir, "rerank.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cli); err != nil {
		t.Fatal(err)
	}
	m := load(t, "reranker", &Options{Task: TaskPairScoring})
	documents := make([]string, len(cli.Ranked))
	for _, r := range cli.Ranked {
		documents[r.Index] = r.Document
	}
	queries := []string{cli.Query, cli.Query, cli.Query}
	scores, err := m.ScorePairs(context.Background(), queries, documents)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cli.Ranked {
		if math.Abs(float64(scores[r.Index].Score-r.Score)) > 1e-5 || scores[r.Index].Input.InputTokens == 0 {
			t.Errorf("pair %d: %+v, the CLI gives %v", r.Index, scores[r.Index], r.Score)
		}
	}
	best, err := m.Rerank(context.Background(), cli.Query, documents, 2)
	if err != nil || len(best) != 2 || best[0].Index != cli.Ranked[0].Index || best[1].Index != cli.Ranked[1].Index {
		t.Fatalf("rerank %+v %v, the CLI ranks %+v", best, err, cli.Ranked)
	}
	if _, err := m.ScorePairs(context.Background(), queries, documents[:1]); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("mismatched lengths: %v", err)
	}
	if _, err := m.Classify("hello"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a pair scorer does not classify: %v", err)
	}
	if _, err := Load(filepath.Join(modelsDir, "reranker"), &Options{Task: TaskPairScoring, Layer: 1, Dimension: 3}); !errors.Is(err, ErrInvalidModel) {
		t.Errorf("an untrained exit: %v", err)
	}
}

func TestEmbedWithInput(t *testing.T) {
	m := load(t, "intent", &Options{Task: TaskEmbedding, MaxLength: 8, CountInputTokens: true})
	texts := []string{"short", "a much longer text that the model cuts at eight tokens"}
	got, err := m.EmbedWithInput(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.EmbedBatch(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if !reflect.DeepEqual(got[i].Vector, want[i]) {
			t.Errorf("text %d: EmbedWithInput and EmbedBatch differ", i)
		}
	}
	if in := got[0].Input; in.Truncated || in.InputTokens != in.ProcessedTokens || in.InputTokens == 0 {
		t.Errorf("short text: %+v", in)
	}
	if in := got[1].Input; !in.Truncated || in.ProcessedTokens != 8 || in.InputTokens <= 8 {
		t.Errorf("long text: %+v", in)
	}
}

// checkBadTextsAreErrors: invalid UTF-8 is CodeInvalidUTF8 with a message;
// empty texts and NULs inside are answered.
func checkBadTextsAreErrors(t *testing.T, m SequenceClassifier) {
	if _, err := m.Classify("bad \xff utf-8"); !errors.Is(err, ErrInvalidUTF8) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	var e *Error
	if _, err := m.Classify("\xc3"); !errors.As(err, &e) || e.Code != CodeInvalidUTF8 || e.Message == "" {
		t.Errorf("errors.As: %v", err)
	}
	if _, err := m.Classify(""); err != nil {
		t.Errorf("empty text: %v", err)
	}
	if _, err := m.Classify("nul\x00inside"); err != nil {
		t.Errorf("NUL inside: %v", err)
	}
}

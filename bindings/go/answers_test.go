//go:build cgo

package semroute

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestCompressEqualsTheCLI(t *testing.T) {
	var want struct {
		Text     string   `json:"text"`
		Tokens   int      `json:"tokens"`
		Language string   `json:"language"`
		Ranges   [][2]int `json:"ranges"`
	}
	readJSON(t, "compress.json", &want)
	text, err := os.ReadFile(filepath.Join(modelsDir, "long.txt"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCompressor(&CompressOptions{MaxTokens: 40, Tokenizer: filepath.Join(modelsDir, "intent")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.Compress(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want.Text || got.Tokens != want.Tokens || got.Language != want.Language || !got.Reduced ||
		len(got.Ranges) != len(want.Ranges) {
		t.Fatalf("Compress = %+v, want %+v", got, want)
	}
	for i := range want.Ranges {
		if got.Ranges[i] != want.Ranges[i] {
			t.Fatalf("range %d = %v, want %v", i, got.Ranges[i], want.Ranges[i])
		}
	}
	if _, err := c.Compress("bad \xff"); !errors.Is(err, ErrInvalidUTF8) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	if _, err := NewCompressor(&CompressOptions{Languages: []string{"xx"}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("unknown language: %v", err)
	}
	c.Close()
	if _, err := c.Compress("x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

type cliSentence struct {
	Event    string  `json:"event"`
	Begin    int     `json:"begin"`
	End      int     `json:"end"`
	MaxScore float64 `json:"max_score"`
	Spans    []struct {
		Begin int     `json:"begin"`
		End   int     `json:"end"`
		Score float64 `json:"score"`
	} `json:"spans"`
}

func readSentences(t *testing.T) []cliSentence {
	t.Helper()
	f, err := os.Open(filepath.Join(modelsDir, "halluc.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []cliSentence
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		var s cliSentence
		if err := json.Unmarshal(scanner.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func sameChecks(t *testing.T, got []SentenceCheck, want []cliSentence) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d sentences, want %d", len(got), len(want))
		return
	}
	events := map[string]Event{"ok": EventOK, "warn": EventWarn, "stop": EventStop}
	for i, w := range want {
		g := got[i]
		if g.Begin != w.Begin || g.End != w.End || g.Event != events[w.Event] || !near(g.MaxScore, w.MaxScore) ||
			len(g.Spans) != len(w.Spans) {
			t.Errorf("sentence %d = %+v, want %+v", i, g, w)
			return
		}
		for j, ws := range w.Spans {
			if g.Spans[j].Begin != ws.Begin || g.Spans[j].End != ws.End || !near(g.Spans[j].Score, ws.Score) {
				t.Errorf("sentence %d span %d = %+v, want %+v", i, j, g.Spans[j], ws)
			}
		}
	}
}

func TestHallucinationDetectorEqualsTheCLI(t *testing.T) {
	d, err := LoadHallucinationDetector(filepath.Join(modelsDir, "halluc"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	checkDetectorEqualsTheCLI(t, d)
}

// The CLI's judgement of the test answer, whole and streamed as SSE a few
// bytes at a time from several goroutines' own streams; bad streams fail.
func checkDetectorEqualsTheCLI(t *testing.T, d AnswerChecker) {
	want := readSentences(t)
	groundTruth, _ := os.ReadFile(filepath.Join(modelsDir, "context.txt"))
	answer, _ := os.ReadFile(filepath.Join(modelsDir, "answer.txt"))
	got, err := d.Detect(context.Background(), string(groundTruth), "Tell me about the tower.", string(answer))
	if err != nil {
		t.Fatal(err)
	}
	sameChecks(t, got, want)

	// The same answer streamed as SSE, a few bytes at a time, from several goroutines' own streams.
	var sse strings.Builder
	sse.WriteString(": keep-alive\n\n")
	for i := 0; i < len(answer); i += 7 {
		end := i + 7
		if end > len(answer) {
			end = len(answer)
		}
		piece, _ := json.Marshal(string(answer[i:end]))
		sse.WriteString(`data: {"choices":[{"delta":{"content":` + string(piece) + "}}]}\n\n")
	}
	sse.WriteString("data: [DONE]\n\n")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := d.OpenAnswerStream(string(groundTruth), "Tell me about the tower.", &StreamOptions{SSE: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			var checks []SentenceCheck
			raw := sse.String()
			for i := 0; i < len(raw); i += 13 {
				end := i + 13
				if end > len(raw) {
					end = len(raw)
				}
				c, err := s.Feed([]byte(raw[i:end]))
				if err != nil {
					t.Error(err)
					return
				}
				checks = append(checks, c...)
			}
			last, err := s.Finish()
			if err != nil {
				t.Error(err)
				return
			}
			sameChecks(t, append(checks, last...), want)
		}()
	}
	wg.Wait()

	s, err := d.OpenAnswerStream("context", "", &StreamOptions{SSE: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feed([]byte("data: {oops}\n\n")); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("malformed SSE: %v", err)
	}
	s.Close()
	if _, err := s.Feed([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := d.Detect(context.Background(), "", "", "answer"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("empty context: %v", err)
	}
}

func TestRouterChecksTheAnswersItAsksFor(t *testing.T) {
	config := filepath.Join(t.TempDir(), "router.yaml")
	yaml := "hallucination: {model: " + filepath.Join(modelsDir, "halluc") + "}\n" +
		"signals: {facts: {kind: keywords, keywords: [tower]}}\n" +
		"decisions: [{name: rag, when: facts, check_answer: true}]\n"
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRouter(config)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	request := []byte(`{"messages": [{"role": "user", "content": "How tall is the tower?"},
		{"role": "tool", "tool_call_id": "1", "content": "The tower is 330 metres tall."}]}`)
	route, err := r.Route(request, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !route.CheckAnswer || route.Headers["x-semroute-check-answer"] != "true" {
		t.Fatalf("route = %+v", route)
	}
	s, err := r.CheckAnswer(route, "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := s.Feed([]byte("It is 330 metres tall. "))
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.Finish() // the sentence ends where the next word is known, or at the end
	if err != nil || len(first)+len(last) != 1 || last[0].End != 22 {
		t.Fatalf("Feed = %v, Finish = %v, %v", first, last, err)
	}
	plain, err := r.Route([]byte(`{"messages": [{"role": "user", "content": "hello"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CheckAnswer(plain, "", false); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a route without a check: %v", err)
	}
}

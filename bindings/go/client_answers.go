package semroute

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RemoteDetector is a hallucination detector served by the sidecar
// (/v1/check-answer). It satisfies AnswerChecker, as the in-process
// HallucinationDetector does.
type RemoteDetector struct {
	c    *Client
	name string
}

var _ AnswerChecker = (*RemoteDetector)(nil)
var _ AnswerStream = (*RemoteAnswerStream)(nil)

// wireSentence is one judged sentence as the sidecar sends it.
type wireSentence struct {
	Event     string  `json:"event"`
	Begin     int     `json:"begin"`
	End       int     `json:"end"`
	MaxScore  float64 `json:"max_score"`
	LatencyMS float64 `json:"latency_ms"`
	Spans     []struct {
		Begin    int     `json:"begin"`
		End      int     `json:"end"`
		Score    float64 `json:"score"`
		Severity string  `json:"severity"`
		NLI      *struct {
			Label         string  `json:"label"`
			Entailment    float64 `json:"entailment"`
			Neutral       float64 `json:"neutral"`
			Contradiction float64 `json:"contradiction"`
		} `json:"nli"`
	} `json:"spans"`
}

var (
	eventsByName     = map[string]Event{"ok": EventOK, "warn": EventWarn, "stop": EventStop}
	severitiesByName = map[string]int{"low": 0, "low-medium": 1, "medium": 2, "high": 3, "critical": 4}
)

func (w wireSentence) check() SentenceCheck {
	c := SentenceCheck{Begin: w.Begin, End: w.End, Event: eventsByName[w.Event], MaxScore: w.MaxScore,
		Latency: time.Duration(w.LatencyMS * float64(time.Millisecond))}
	for _, s := range w.Spans {
		span := HallucinationSpan{Begin: s.Begin, End: s.End, Score: s.Score, Severity: severitiesByName[s.Severity]}
		if s.NLI != nil {
			span.NLILabel, span.Entailment, span.Neutral, span.Contradiction =
				s.NLI.Label, s.NLI.Entailment, s.NLI.Neutral, s.NLI.Contradiction
		}
		c.Spans = append(c.Spans, span)
	}
	return c
}

func checksOf(sentences []wireSentence) []SentenceCheck {
	out := make([]SentenceCheck, 0, len(sentences))
	for _, s := range sentences {
		out = append(out, s.check())
	}
	return out
}

// Detect checks a whole answer: the sidecar answers with server-sent events,
// one per sentence and a final "done".
func (d *RemoteDetector) Detect(ctx context.Context, groundTruth, question, answer string) ([]SentenceCheck, error) {
	var body []byte
	request := map[string]any{"detector": d.name, "context": groundTruth, "question": question, "answer": answer}
	if err := d.c.call(ctx, http.MethodPost, "/v1/check-answer", request, &body, nil); err != nil {
		return nil, err
	}
	var sentences []wireSentence
	for _, block := range bytes.Split(body, []byte("\n\n")) {
		name, data, ok := bytes.Cut(block, []byte("\n"))
		if !ok || bytes.Equal(name, []byte("event: done")) {
			continue
		}
		var s wireSentence
		if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("data: ")), &s); err != nil {
			return nil, &Error{Code: CodeInternal, Message: "the sidecar's event stream: " + err.Error()}
		}
		sentences = append(sentences, s)
	}
	return checksOf(sentences), nil
}

// OpenAnswerStream opens an answer stream on the sidecar; its context is
// tokenized there once. opts may be nil.
func (d *RemoteDetector) OpenAnswerStream(groundTruth, question string, opts *StreamOptions) (AnswerStream, error) {
	if opts == nil {
		opts = &StreamOptions{}
	}
	request := map[string]any{"detector": d.name, "context": groundTruth, "question": question, "format": "text"}
	if opts.SSE {
		request["format"] = "sse"
	}
	if opts.StopSeverity > 0 {
		request["stop_at"] = strconv.Itoa(opts.StopSeverity)
	}
	var out struct {
		Stream string `json:"stream"`
	}
	if err := d.c.call(context.Background(), http.MethodPost, "/v1/check-answer/streams", request, &out, nil); err != nil {
		return nil, err
	}
	return &RemoteAnswerStream{c: d.c, path: "/v1/check-answer/streams/" + out.Stream}, nil
}

// RemoteAnswerStream is an answer stream living on the sidecar. One
// goroutine at a time may feed it; Close is safe from any. The sidecar drops
// a stream left idle past its stream_idle_ms.
type RemoteAnswerStream struct {
	mu    sync.Mutex
	c     *Client
	path  string
	ended bool
}

// Feed sends the answer's next bytes and returns the sentences they complete.
func (s *RemoteAnswerStream) Feed(chunk []byte) ([]SentenceCheck, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil, ErrClosed
	}
	var out struct {
		Events []wireSentence `json:"events"`
	}
	if err := s.c.call(context.Background(), http.MethodPost, s.path, chunk, &out, nil); err != nil {
		return nil, err
	}
	return checksOf(out.Events), nil
}

// Finish ends the answer and returns its last sentence, judged; the
// stream is gone from the sidecar afterwards.
func (s *RemoteAnswerStream) Finish() ([]SentenceCheck, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil, ErrClosed
	}
	s.ended = true
	var out struct {
		Events []wireSentence `json:"events"`
	}
	if err := s.c.call(context.Background(), http.MethodDelete, s.path, nil, &out, nil); err != nil {
		return nil, err
	}
	return checksOf(out.Events), nil
}

// Close ends the stream on the sidecar if Finish did not; idempotent.
func (s *RemoteAnswerStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.ended = true
		var ignored []byte
		_ = s.c.call(context.Background(), http.MethodDelete, s.path, nil, &ignored, nil)
	}
	return nil
}

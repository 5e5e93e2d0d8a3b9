//go:build cgo

package semroute

/*
#include <stdlib.h>
#include <semroute/semroute.h>
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Compressor reduces long prompts to a skeleton within a token budget (see
// docs/compression.md). Safe for concurrent use.
type Compressor struct {
	guard
	handle *C.semroute_compressor
}

// NewCompressor makes a compressor; opts may be nil.
func NewCompressor(opts *CompressOptions) (*Compressor, error) {
	if opts == nil {
		opts = &CompressOptions{}
	}
	if opts.MaxTokens < 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "MaxTokens must be >= 0"}
	}
	var strings cStrings
	defer strings.free()
	params := C.semroute_compress_default_params()
	if opts.MaxTokens > 0 {
		params.max_tokens = C.uint32_t(opts.MaxTokens)
	}
	if opts.HeadRatio != 0 || opts.TailRatio != 0 {
		params.head_ratio = C.double(opts.HeadRatio)
		params.tail_ratio = C.double(opts.TailRatio)
	}
	if opts.KeepStopWords {
		params.drop_stop_words = 0
	}
	languages := ""
	for i, l := range opts.Languages {
		if i > 0 {
			languages += ","
		}
		languages += l
	}
	params.languages = strings.get(languages)
	params.tokenizer = strings.get(opts.Tokenizer)
	var handle *C.semroute_compressor
	if err := statusError(C.semroute_compressor_new(&params, &handle)); err != nil {
		return nil, err
	}
	return &Compressor{handle: handle}, nil
}

// Close releases the compressor after the calls in flight; idempotent.
func (c *Compressor) Close() error {
	c.close(func() { C.semroute_compressor_free(c.handle) })
	return nil
}

// Compress returns the skeleton of text.
func (c *Compressor) Compress(text string) (Compressed, error) {
	var out Compressed
	bytes := []byte(text)
	err := c.do(func() error {
		var r *C.semroute_compressed
		if err := statusError(C.semroute_compress(c.handle, cBytes(bytes), C.size_t(len(bytes)), &r)); err != nil {
			return err
		}
		defer C.semroute_compressed_free(r)
		var length C.size_t
		p := C.semroute_compressed_text(r, &length)
		out.Text = C.GoStringN(p, C.int(length))
		out.Reduced = C.semroute_compressed_reduced(r) != 0
		out.Tokens = int(C.semroute_compressed_tokens(r))
		out.Language = C.GoString(C.semroute_compressed_language(r))
		var count C.size_t
		ranges := C.semroute_compressed_ranges(r, &count)
		if count > 0 {
			flat := unsafe.Slice(ranges, 2*int(count))
			for i := 0; i < int(count); i++ {
				out.Ranges = append(out.Ranges, [2]int{int(flat[2*i]), int(flat[2*i+1])})
			}
		}
		return nil
	})
	return out, err
}

// cBytes points at b's bytes for the length of a call (NULL when empty).
func cBytes(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// HallucinationDetector finds the parts of an answer its context does not
// support, sentence by sentence (see docs/hallucination.md). Safe for
// concurrent use.
type HallucinationDetector struct {
	guard
	handle *C.semroute_halluc
}

// LoadHallucinationDetector loads a token classifier (labels supported /
// hallucinated) and, with opts.NLIModel, an NLI model. opts may be nil.
func LoadHallucinationDetector(dir string, opts *DetectorOptions) (*HallucinationDetector, error) {
	if opts == nil {
		opts = &DetectorOptions{}
	}
	var strings cStrings
	defer strings.free()
	model, err := modelParams(opts.Model, &strings)
	if err != nil {
		return nil, err
	}
	params := C.semroute_halluc_default_params()
	params.nli_model = strings.get(opts.NLIModel)
	params.input_template = strings.get(opts.Template)
	if opts.Threshold != 0 {
		params.threshold = C.double(opts.Threshold)
	}
	switch {
	case opts.ContextWindows < 0:
		params.context_windows = 0
	case opts.ContextWindows > 0:
		params.context_windows = C.uint32_t(opts.ContextWindows)
	}
	if opts.MinSpanWords > 0 {
		params.min_span_words = C.uint32_t(opts.MinSpanWords)
	}
	if opts.KeepEntailed {
		params.nli_filter = 0
	}
	// In C memory: a struct passed to C may not hold a pointer to Go memory.
	cModel := (*C.semroute_model_params)(C.malloc(C.sizeof_semroute_model_params))
	defer C.free(unsafe.Pointer(cModel))
	*cModel = model
	params.model = cModel
	path := strings.get(dir)
	var handle *C.semroute_halluc
	if err := statusError(C.semroute_halluc_load(path, &params, &handle)); err != nil {
		return nil, err
	}
	return &HallucinationDetector{handle: handle}, nil
}

// Close releases the detector after the calls in flight; idempotent. Open
// streams keep working.
func (d *HallucinationDetector) Close() error {
	d.close(func() { C.semroute_halluc_free(d.handle) })
	return nil
}

// Detect checks a whole answer against groundTruth (retrieved context, tool
// results) and the question (may be empty). ctx is checked before the work
// starts.
func (d *HallucinationDetector) Detect(ctx context.Context, groundTruth, question, answer string) ([]SentenceCheck, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []SentenceCheck
	g, q, a := []byte(groundTruth), []byte(question), []byte(answer)
	err := d.do(func() error {
		var r *C.semroute_halluc_result
		status := C.semroute_halluc_detect(d.handle, cBytes(g), C.size_t(len(g)), cBytes(q), C.size_t(len(q)),
			cBytes(a), C.size_t(len(a)), &r)
		if err := statusError(status); err != nil {
			return err
		}
		out = sentenceChecks(r)
		return nil
	})
	return out, err
}

// OpenStream starts checking an answer that arrives in chunks (Feed), each
// sentence as soon as it is complete. opts may be nil.
func (d *HallucinationDetector) OpenStream(groundTruth, question string, opts *StreamOptions) (*Stream, error) {
	if opts == nil {
		opts = &StreamOptions{}
	}
	var s *Stream
	g, q := []byte(groundTruth), []byte(question)
	err := d.do(func() error {
		var h *C.semroute_halluc_stream
		status := C.semroute_halluc_stream_open(d.handle, cBytes(g), C.size_t(len(g)), cBytes(q), C.size_t(len(q)),
			cBool(opts.SSE), C.int(opts.StopSeverity), &h)
		if err := statusError(status); err != nil {
			return err
		}
		s = newStream(h)
		return nil
	})
	return s, err
}

// OpenAnswerStream is OpenStream behind the AnswerStream interface (what
// AnswerChecker asks for, so the sidecar's detector can stand in).
func (d *HallucinationDetector) OpenAnswerStream(groundTruth, question string, opts *StreamOptions) (AnswerStream, error) {
	s, err := d.OpenStream(groundTruth, question, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Stream checks one answer as it arrives. One goroutine at a time may feed
// it; Close is safe from any.
type Stream struct {
	mu     sync.Mutex
	handle *C.semroute_halluc_stream
}

func newStream(h *C.semroute_halluc_stream) *Stream {
	s := &Stream{handle: h}
	runtime.SetFinalizer(s, func(s *Stream) { s.Close() })
	return s
}

// Feed gives the stream the next chunk and returns the sentences it
// completes, judged. After an error (malformed SSE, invalid UTF-8) or a stop
// event, later calls fail.
func (s *Stream) Feed(chunk []byte) ([]SentenceCheck, error) {
	return s.call(func(h *C.semroute_halluc_stream, r **C.semroute_halluc_result) *C.semroute_status {
		return C.semroute_halluc_stream_feed(h, cBytes(chunk), C.size_t(len(chunk)), r)
	})
}

// Finish ends the answer and returns its last sentence, judged.
func (s *Stream) Finish() ([]SentenceCheck, error) {
	return s.call(func(h *C.semroute_halluc_stream, r **C.semroute_halluc_result) *C.semroute_status {
		return C.semroute_halluc_stream_finish(h, r)
	})
}

func (s *Stream) call(fn func(*C.semroute_halluc_stream, **C.semroute_halluc_result) *C.semroute_status) ([]SentenceCheck, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handle == nil {
		return nil, ErrClosed
	}
	var r *C.semroute_halluc_result
	if err := statusError(fn(s.handle, &r)); err != nil {
		return nil, err
	}
	return sentenceChecks(r), nil
}

// Close releases the stream; idempotent.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handle != nil {
		C.semroute_halluc_stream_free(s.handle)
		s.handle = nil
	}
	return nil
}

// sentenceChecks converts and frees r.
func sentenceChecks(r *C.semroute_halluc_result) []SentenceCheck {
	defer C.semroute_halluc_result_free(r)
	n := int(C.semroute_halluc_result_count(r))
	out := make([]SentenceCheck, 0, n)
	for i := 0; i < n; i++ {
		c := C.semroute_halluc_result_sentence(r, C.size_t(i))
		check := SentenceCheck{Begin: int(c.begin), End: int(c.end), Event: Event(c.event), MaxScore: float64(c.max_score),
			Latency: time.Duration(float64(c.latency_ms) * float64(time.Millisecond))}
		if c.span_count > 0 {
			for _, sp := range unsafe.Slice(c.spans, int(c.span_count)) {
				check.Spans = append(check.Spans, HallucinationSpan{Begin: int(sp.begin), End: int(sp.end),
					Score: float64(sp.score), NLILabel: C.GoString(sp.nli_label), Entailment: float64(sp.entailment),
					Neutral: float64(sp.neutral), Contradiction: float64(sp.contradiction), Severity: int(sp.severity)})
			}
		}
		out = append(out, check)
	}
	return out
}

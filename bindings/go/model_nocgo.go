//go:build !cgo

package semroute

import "context"

// Model is unavailable without cgo: Load returns ErrUnavailable, and so does
// every method, so code using the package compiles everywhere.
type Model struct{}

// Load returns ErrUnavailable: this build has no cgo.
func Load(dir string, opts *Options) (*Model, error) { return nil, ErrUnavailable }

// BindHead returns ErrUnavailable: this build has no cgo.
func (m *Model) BindHead(headDir string, opts *Options) (*Model, error) { return nil, ErrUnavailable }

// SharesEncoder is false: this build has no cgo.
func (m *Model) SharesEncoder(other *Model) bool { return false }

func (m *Model) Close() error { return nil }
func (m *Model) Info() Info   { return Info{} }

func (m *Model) Classify(text string) (Classification, error) {
	return Classification{}, ErrUnavailable
}
func (m *Model) ClassifyBatch(ctx context.Context, texts []string) ([]Classification, error) {
	return nil, ErrUnavailable
}
func (m *Model) ClassifyPairs(ctx context.Context, firsts, seconds []string) ([]Classification, error) {
	return nil, ErrUnavailable
}
func (m *Model) ClassifyWindows(document string, opts WindowOptions) (Document, error) {
	return Document{}, ErrUnavailable
}
func (m *Model) ClassifyTokenWindows(document string, opts WindowOptions) (TokenResult, error) {
	return TokenResult{}, ErrUnavailable
}
func (m *Model) ClassifyTokens(text string) (TokenResult, error) {
	return TokenResult{}, ErrUnavailable
}
func (m *Model) ClassifyTokensBatch(ctx context.Context, texts []string) ([]TokenResult, error) {
	return nil, ErrUnavailable
}
func (m *Model) Embed(text string) ([]float32, error) { return nil, ErrUnavailable }
func (m *Model) EmbedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	return nil, ErrUnavailable
}
func (m *Model) Similarity(a, b string) (float32, error) { return 0, ErrUnavailable }
func (m *Model) EmbedWithInput(ctx context.Context, texts []string) ([]Embedding, error) {
	return nil, ErrUnavailable
}
func (m *Model) Rerank(ctx context.Context, query string, documents []string, k int) ([]Match, error) {
	return nil, ErrUnavailable
}
func (m *Model) ScorePairs(ctx context.Context, queries, documents []string) ([]PairScore, error) {
	return nil, ErrUnavailable
}
func (m *Model) TopK(ctx context.Context, query string, candidates []string, k int) ([]Match, error) {
	return nil, ErrUnavailable
}
func (m *Model) Tokenize(text string, addSpecialTokens bool) (Tokens, error) {
	return Tokens{}, ErrUnavailable
}

// Engine is unavailable without cgo.
type Engine struct{}

// LoadEngine returns ErrUnavailable: this build has no cgo.
func LoadEngine(base string, tasks []EngineTask, opts *Options) (*Engine, error) {
	return nil, ErrUnavailable
}
func (e *Engine) Close() error { return nil }
func (e *Engine) Classify(ctx context.Context, texts []string, tasks ...string) ([][]TaskAnswer, error) {
	return nil, ErrUnavailable
}

// Unified is unavailable without cgo.
type Unified struct{}

// LoadUnified returns ErrUnavailable: this build has no cgo.
func LoadUnified(config string) (*Unified, error) { return nil, ErrUnavailable }
func (u *Unified) Close() error                   { return nil }
func (u *Unified) Classify(ctx context.Context, texts []string, req *UnifiedRequest) ([][]TaskAnswer, error) {
	return nil, ErrUnavailable
}

// Router is unavailable without cgo.
type Router struct{}

// LoadRouter returns ErrUnavailable: this build has no cgo.
func LoadRouter(config string) (*Router, error) { return nil, ErrUnavailable }
func (r *Router) Close() error                  { return nil }
func (r *Router) Route(request []byte, metadata map[string]string) (*Route, error) {
	return nil, ErrUnavailable
}
func (r *Router) StoreAnswer(route *Route, answer []byte) (bool, error) {
	return false, ErrUnavailable
}

func (r *Router) CheckAnswer(route *Route, groundTruth string, sse bool) (*Stream, error) {
	return nil, ErrUnavailable
}

// Compressor is unavailable without cgo.
type Compressor struct{}

// NewCompressor returns ErrUnavailable: this build has no cgo.
func NewCompressor(opts *CompressOptions) (*Compressor, error) { return nil, ErrUnavailable }
func (c *Compressor) Close() error                             { return nil }
func (c *Compressor) Compress(text string) (Compressed, error) { return Compressed{}, ErrUnavailable }

// HallucinationDetector is unavailable without cgo.
type HallucinationDetector struct{}

// LoadHallucinationDetector returns ErrUnavailable: this build has no cgo.
func LoadHallucinationDetector(dir string, opts *DetectorOptions) (*HallucinationDetector, error) {
	return nil, ErrUnavailable
}
func (d *HallucinationDetector) Close() error { return nil }
func (d *HallucinationDetector) Detect(ctx context.Context, groundTruth, question, answer string) ([]SentenceCheck, error) {
	return nil, ErrUnavailable
}
func (d *HallucinationDetector) OpenStream(groundTruth, question string, opts *StreamOptions) (*Stream, error) {
	return nil, ErrUnavailable
}

func (d *HallucinationDetector) OpenAnswerStream(groundTruth, question string, opts *StreamOptions) (AnswerStream, error) {
	return nil, ErrUnavailable
}

// Stream is unavailable without cgo.
type Stream struct{}

func (s *Stream) Feed(chunk []byte) ([]SentenceCheck, error) { return nil, ErrUnavailable }
func (s *Stream) Finish() ([]SentenceCheck, error)           { return nil, ErrUnavailable }
func (s *Stream) Close() error                               { return nil }

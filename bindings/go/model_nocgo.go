//go:build !cgo

package semroute

import "context"

// Model is unavailable without cgo: Load returns ErrUnavailable, and so does
// every method, so code using the package compiles everywhere.
type Model struct{}

// Load returns ErrUnavailable: this build has no cgo.
func Load(dir string, opts *Options) (*Model, error) { return nil, ErrUnavailable }

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
func (m *Model) TopK(ctx context.Context, query string, candidates []string, k int) ([]Match, error) {
	return nil, ErrUnavailable
}
func (m *Model) Tokenize(text string, addSpecialTokens bool) (Tokens, error) {
	return Tokens{}, ErrUnavailable
}

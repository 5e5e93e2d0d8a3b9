package semroute

import "context"

// The interfaces a router programs against: satisfied in process by *Model,
// *Unified, *Router and *HallucinationDetector (cgo), and by the sidecar
// client's *RemoteModel, *RemoteUnified, *RemoteRouter and *RemoteDetector
// (net/http, no cgo). Choosing embedded or
// sidecar is then configuration, not a rewrite of call sites.

// SequenceClassifier labels texts (domain, jailbreak, intent).
type SequenceClassifier interface {
	Classify(text string) (Classification, error)
	ClassifyBatch(ctx context.Context, texts []string) ([]Classification, error)
}

// TokenClassifier finds entity spans (PII).
type TokenClassifier interface {
	ClassifyTokens(text string) (TokenResult, error)
	ClassifyTokensBatch(ctx context.Context, texts []string) ([]TokenResult, error)
}

// TextEmbedder embeds texts and compares them.
type TextEmbedder interface {
	Embed(text string) ([]float32, error)
	EmbedBatch(ctx context.Context, texts []string) ([][]float32, error)
	Similarity(a, b string) (float32, error)
}

// MultiTaskClassifier answers several tasks per text (the unified classifier).
type MultiTaskClassifier interface {
	Classify(ctx context.Context, texts []string, req *UnifiedRequest) ([][]TaskAnswer, error)
}

// RequestRouter routes OpenAI chat requests and caches their answers.
type RequestRouter interface {
	Route(request []byte, metadata map[string]string) (*Route, error)
	StoreAnswer(route *Route, answer []byte) (bool, error)
}

// AnswerChecker judges an LLM's answer against its context (hallucination
// detection), whole or while it streams.
type AnswerChecker interface {
	Detect(ctx context.Context, groundTruth, question, answer string) ([]SentenceCheck, error)
	OpenAnswerStream(groundTruth, question string, opts *StreamOptions) (AnswerStream, error)
}

// AnswerStream is one answer checked as it arrives: each Feed returns the
// sentences its chunk completes; Finish judges the last one.
type AnswerStream interface {
	Feed(chunk []byte) ([]SentenceCheck, error)
	Finish() ([]SentenceCheck, error)
	Close() error
}

// The in-process handles (the cgo build; the stubs without cgo say the same).
var (
	_ SequenceClassifier  = (*Model)(nil)
	_ TokenClassifier     = (*Model)(nil)
	_ TextEmbedder        = (*Model)(nil)
	_ MultiTaskClassifier = (*Unified)(nil)
	_ RequestRouter       = (*Router)(nil)
	_ AnswerChecker       = (*HallucinationDetector)(nil)
	_ AnswerStream        = (*Stream)(nil)
)

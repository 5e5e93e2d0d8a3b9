package semroute

import (
	"encoding/json"
	"time"
)

// Task is what a model is loaded for.
type Task int

const (
	// TaskAuto reads config.json: …ForSequenceClassification,
	// …ForTokenClassification, anything else is an embedding model.
	TaskAuto Task = iota
	TaskSequenceClassification
	TaskTokenClassification
	TaskEmbedding
	// TaskEncoder loads the encoder alone (no head, no tokenizer needed):
	// task heads are bound to it with BindHead.
	TaskEncoder
	// TaskPairScoring loads a cross-encoder that scores (query, document)
	// pairs (ScorePairs, Rerank); Options.Layer and Dimension pick its exit.
	TaskPairScoring
)

// Truncation says which tokens survive when a text exceeds MaxLength.
type Truncation int

const (
	KeepStart Truncation = iota // drop the tail
	KeepEnd                     // drop the head
	KeepBoth                    // keep head and tail, drop the middle
)

// Overflow is what an input longer than MaxLength gets.
type Overflow int

const (
	OverflowTruncate Overflow = iota // cut as Truncation says
	OverflowReject                   // refused with CodeTooLong: nothing is answered on a part
)

// InputUsage is what one input was: its tokens before truncation (special
// tokens included; 0 when it was cut without being read to its end, see
// Options.CountInputTokens), the tokens the model read, and whether it was cut.
type InputUsage struct {
	InputTokens     int
	ProcessedTokens int
	Truncated       bool
}

// Pooling turns token states into one embedding.
type Pooling int

const (
	PoolingDefault Pooling = iota // what the model folder says
	PoolingMean
	PoolingCLS
	PoolingLastToken
)

// Options for Load. The zero value (or nil) loads for the model's own task
// on the CPU in float32, with the model's length limit.
type Options struct {
	Task       Task
	Device     string     // "cpu" (default), "cuda", "cuda:1"
	DType      string     // "float32" (default), "bfloat16", "float16", "int8", "auto"
	Threads    int        // > 0 sets the process-wide compute thread count
	MaxLength  int        // tokens, special tokens included; 0 = the model's limit
	Truncation Truncation //
	Overflow   Overflow   // truncate (default) or reject a longer input
	Tokenizer  string     // tokenizer.json (or its directory) when not beside the model
	// CountInputTokens reads a text cut to MaxLength to its end, so that
	// InputUsage.InputTokens counts it whole (a long text then costs its length).
	CountInputTokens bool

	// Embedding models only.
	Pooling     Pooling
	NoNormalize bool   // return raw pooled vectors instead of L2-normalized ones
	Dimension   int    // Matryoshka: keep the first N values; 0 = all
	Layer       int    // early exit after this many layers; 0 = all
	Prompt      string // put before every text, e.g. "Instruct: …\nQuery: "

	// LoRA.
	Adapter         string // a PEFT LoRA adapter directory for the model
	UnmergedAdapter bool   // add it at run time instead of folding it into the weights at load

	// Dynamic batching: concurrent calls on the model (goroutines sending one
	// text each) are coalesced into one forward of up to MaxBatch texts,
	// collected for at most MaxWait after the first arrives; answers equal
	// unbatched ones (to float rounding). MaxBatch <= 1 = off.
	MaxBatch int
	MaxWait  time.Duration
}

// Info describes a loaded model.
type Info struct {
	Task         Task
	ModelType    string // config.json model_type, e.g. "modernbert"
	Architecture string // first config.json architectures entry
	HiddenSize   int
	MaxLength    int      // longest input in tokens
	Labels       []string // classifiers: id2label in order
	// MultiLabel: each label is scored by its own sigmoid (config.json
	// problem_type multi_label_classification); the scores do not sum to 1.
	MultiLabel   bool
	EmbeddingDim int // embedding models: floats per embedding
}

// Classification of one text.
type Classification struct {
	ClassID       int
	Label         string
	Confidence    float32   // score of ClassID
	Probabilities []float32 // every label's score, in label order: a softmax, or sigmoids (Info.MultiLabel)
	Input         InputUsage
}

// WindowOptions shape a windowed call: windows of Size tokens (special
// tokens included; 0 = the model's MaxLength), consecutive ones sharing
// Overlap text tokens; a document of more than MaxDocumentTokens text tokens
// (0 = no limit) is refused with CodeTooLong, never cut.
type WindowOptions struct {
	Size              int
	Overlap           int
	MaxDocumentTokens int
}

// Window is one window of a document: its text tokens [TokenBegin, TokenEnd)
// in the document's (special tokens excluded), the bytes [Begin, End) they
// cover, and its classification (Input is not set: a window is never cut).
type Window struct {
	TokenBegin, TokenEnd int
	Begin, End           int
	Classification       Classification
}

// Document is a document classified window by window.
type Document struct {
	Windows       []Window
	ContentTokens int // the document's text tokens
}

// Entity is a span of token-classified text, e.g. an e-mail address.
type Entity struct {
	Type  string // "EMAIL" for B-EMAIL / I-EMAIL
	Begin int    // byte offsets into the text
	End   int
	Text  string
	Score float32 // mean of the span's token probabilities
}

// TokenLabel is one token's prediction (special tokens excluded).
type TokenLabel struct {
	TokenID     int
	LabelID     int
	Label       string
	Begin, End  int // byte offsets into the text
	Probability float32
}

// TokenResult is the token classification of one text.
type TokenResult struct {
	Entities []Entity
	Tokens   []TokenLabel
	Input    InputUsage
}

// Match is a candidate and its cosine similarity to a query.
type Match struct {
	Index int
	Score float32
}

// Embedding is one text's embedding and what the text was.
type Embedding struct {
	Vector []float32
	Input  InputUsage
}

// PairScore is one (query, document) pair's relevance.
type PairScore struct {
	Score float32 // raw logit, higher = more relevant
	Input InputUsage
}

// Tokens is a tokenized text.
type Tokens struct {
	IDs     []int32
	Offsets [][2]int // byte [begin, end) per token; {0, 0} for special tokens
	Tokens  []string
}

// Path is how a task was answered.
type Path int

const (
	PathTraditional Path = iota // a separately fine-tuned model
	PathLoRA                    // the multi-task engine (adapters over a shared base)
)

func (p Path) String() string {
	if p == PathLoRA {
		return "lora"
	}
	return "traditional"
}

// EngineTask is one task adapter of a multi-task engine.
type EngineTask struct {
	Name    string
	Adapter string // PEFT adapter directory, with its head in modules_to_save
	Kind    Task   // TaskAuto (from the adapter's task_type), TaskSequenceClassification or TaskTokenClassification
}

// UnifiedRequest selects tasks for the unified classifier.
type UnifiedRequest struct {
	Tasks          []string // empty: every configured task
	PreferAccuracy bool     // auto policy: use the fine-tuned models where loaded
}

// TaskAnswer is one task's answer for one text.
type TaskAnswer struct {
	Task      string
	Kind      Task // TaskSequenceClassification or TaskTokenClassification
	Path      Path
	Reason    string  // why that path (and any fallback)
	LatencyMS float64 // duration of the call that produced it
	Error     string  // set when every path failed; the fields below are then empty
	ErrorCode Code    // Error's stable code (0 when answered)

	Classification Classification // sequence tasks
	Risk           float32        // total probability of the task's positive labels
	Flagged        bool           // Risk >= the task's threshold
	Entities       []Entity       // token tasks
}

// Route is a routing decision for one request.
type Route struct {
	Decision   string  // the decision's name, "default" when none matched
	Confidence float64 // how sure the decision is (see docs/router.md)
	Blocked    bool    // return Response to the caller instead of calling a model
	CacheHit   bool    // Response is a cached answer: return it instead of calling a model
	Model      string  // the request's "model" after routing
	// The rewritten request: every field the decision does not own unchanged.
	Request json.RawMessage
	// When Blocked, a chat.completion whose message is the reason; on a
	// cache hit, the cached answer.
	Response json.RawMessage
	// Headers for the upstream request (x-semroute-decision and the decision's own).
	Headers map[string]string
	// Everything, with the trace: decisions evaluated, signals computed (value,
	// latency) and skipped.
	JSON json.RawMessage

	// The decision asks for the model's answer to be checked: Router.CheckAnswer.
	CheckAnswer bool

	handle any // after a cache miss or for an answer check: the C route
}

// CompressOptions configure a Compressor; the zero value is the defaults.
type CompressOptions struct {
	MaxTokens int // the skeleton's budget; 0 = 512
	// Shares of the budget kept from the text's start and end; both 0 = 0.2 each.
	HeadRatio, TailRatio float64
	KeepStopWords        bool     // do not drop stop words between the start and the end
	Languages            []string // stop-word lists to choose from ("en", "de" …); nil = every list shipped
	Tokenizer            string   // tokenizer.json or a model directory counting the budget; "" = words and marks
}

// Compressed is a prompt's skeleton.
type Compressed struct {
	Text     string   // the skeleton; the whole text when it fits the budget
	Reduced  bool     // false: the text fit and is Text
	Tokens   int      // of Text, as the budget counts them
	Language string   // the stop-word list used, "" for none
	Ranges   [][2]int // byte ranges of the original kept, in order
}

// Event is what a checked sentence means for the answer's stream.
type Event int

const (
	EventOK   Event = 0 // the sentence is supported
	EventWarn Event = 1 // it has unsupported spans
	EventStop Event = 2 // a span reached the stream's stop severity: end the stream
)

// DetectorOptions configure a HallucinationDetector; the zero value is the defaults.
type DetectorOptions struct {
	NLIModel       string  // an NLI model directory explaining each span; "" = none
	Template       string  // "lettucedetect" (default) or "halugate"
	Threshold      float64 // a token is unsupported from this probability on; 0 = 0.5
	ContextWindows int     // context windows read per sentence; 0 = 2, -1 = all
	MinSpanWords   int     // 0 = 1
	KeepEntailed   bool    // keep spans of sentences the NLI model finds entailed
	Model          *Options
}

// HallucinationSpan is a part of the answer the context does not support.
type HallucinationSpan struct {
	Begin, End    int     // bytes of the answer
	Score         float64 // highest token probability of being unsupported
	NLILabel      string  // "entailment", "neutral", "contradiction"; "" without an NLI model
	Entailment    float64 // NLI probabilities
	Neutral       float64
	Contradiction float64
	Severity      int // 0 low … 4 critical
}

// SentenceCheck is one sentence of the answer, judged.
type SentenceCheck struct {
	Begin, End int // bytes of the answer
	Event      Event
	MaxScore   float64
	Latency    time.Duration
	Spans      []HallucinationSpan
}

// StreamOptions configure a Stream.
type StreamOptions struct {
	SSE          bool // the chunks are an OpenAI SSE stream's raw bytes; false: plain text deltas
	StopSeverity int  // a span at least this severe stops the stream; 0 = never
}

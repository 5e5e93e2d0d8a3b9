//go:build cgo

package semroute

/*
#cgo pkg-config: semroute
#include <stdlib.h>
#include <semroute/semroute.h>
*/
import "C"

import (
	"context"
	"math"
	"sync"
	"time"
	"unsafe"
)

// batchChunk is how many texts go to the library per call in batch methods;
// the context is checked between chunks.
const batchChunk = 64

// guard lets calls run concurrently and makes Close wait for them.
type guard struct {
	mu     sync.RWMutex
	closed bool
}

// do runs fn unless closed, holding Close off until it returns.
func (g *guard) do(fn func() error) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return ErrClosed
	}
	return fn()
}

// close runs free once, after the calls in flight.
func (g *guard) close(free func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		free()
		g.closed = true
	}
}

// Model is a loaded model. Safe for concurrent use.
type Model struct {
	guard
	handle *C.semroute_model
	info   Info
}

// Load loads a model directory (config.json, *.safetensors, tokenizer.json).
// opts may be nil.
func Load(dir string, opts *Options) (*Model, error) {
	return newModel(dir, opts, func(path *C.char, params *C.semroute_model_params, out **C.semroute_model) error {
		return statusError(C.semroute_model_load(path, params, out))
	})
}

// newModel runs a loading call with dir and opts as C arguments.
func newModel(dir string, opts *Options, load func(*C.char, *C.semroute_model_params, **C.semroute_model) error) (*Model, error) {
	var strings cStrings
	defer strings.free()
	params, err := modelParams(opts, &strings)
	if err != nil {
		return nil, err
	}
	path := C.CString(dir)
	defer C.free(unsafe.Pointer(path))
	var handle *C.semroute_model
	if err := load(path, &params, &handle); err != nil {
		return nil, err
	}
	return &Model{handle: handle, info: describe(handle)}, nil
}

// Close releases the model. It waits for calls in flight and is idempotent.
func (m *Model) Close() error {
	m.close(func() { C.semroute_model_free(m.handle) })
	return nil
}

// BindHead binds the task head of the checkpoint in headDir to m's encoder,
// which the new model shares (nothing of the encoder is loaded again). m may
// be a TaskEncoder, sequence or token classification model; opts (may be nil)
// sets the head's task (TaskAuto: headDir's architectures), tokenizer (else
// headDir's, else m's) and input policy; device and dtype are m's. The two
// models close independently: the head outlives m.
func (m *Model) BindHead(headDir string, opts *Options) (*Model, error) {
	return newModel(headDir, opts, func(dir *C.char, params *C.semroute_model_params, out **C.semroute_model) error {
		return m.call(func(h *C.semroute_model) error {
			return statusError(C.semroute_model_bind_head(h, dir, params, out))
		})
	})
}

// SharesEncoder reports whether m and other run on the same encoder weights
// in memory (one bound to the other, or both to a third). False when either
// is closed.
func (m *Model) SharesEncoder(other *Model) bool {
	shared := false
	_ = m.call(func(a *C.semroute_model) error {
		return other.call(func(b *C.semroute_model) error {
			shared = C.semroute_model_shares_encoder(a, b) != 0
			return nil
		})
	})
	return shared
}

// Info describes the model.
func (m *Model) Info() Info {
	info := m.info
	info.Labels = append([]string(nil), m.info.Labels...)
	return info
}

// Classify classifies one text.
func (m *Model) Classify(text string) (Classification, error) {
	results, err := m.ClassifyBatch(context.Background(), []string{text})
	if err != nil {
		return Classification{}, err
	}
	return results[0], nil
}

// ClassifyBatch classifies texts; the result i belongs to texts[i].
func (m *Model) ClassifyBatch(ctx context.Context, texts []string) ([]Classification, error) {
	out := make([]Classification, 0, len(texts))
	err := m.chunked(ctx, len(texts), func(h *C.semroute_model, lo, hi int) error {
		b := pack(texts[lo:hi])
		var r *C.semroute_classifications
		if err := statusError(C.semroute_classify_batch(h, b.data(), b.offsetsPtr(), C.size_t(hi-lo), &r)); err != nil {
			return err
		}
		defer C.semroute_classifications_free(r)
		out = append(out, classifications(r)...)
		return nil
	})
	return out, err
}

// ClassifyPairs classifies (firsts[i], seconds[i]) pairs with the
// tokenizer's pair template (NLI premise and hypothesis).
func (m *Model) ClassifyPairs(ctx context.Context, firsts, seconds []string) ([]Classification, error) {
	if len(firsts) != len(seconds) {
		return nil, &Error{Code: CodeInvalidArgument, Message: "firsts and seconds differ in length"}
	}
	out := make([]Classification, 0, len(firsts))
	err := m.chunked(ctx, len(firsts), func(h *C.semroute_model, lo, hi int) error {
		a, b := pack(firsts[lo:hi]), pack(seconds[lo:hi])
		var r *C.semroute_classifications
		status := C.semroute_classify_pairs(h, a.data(), a.offsetsPtr(), b.data(), b.offsetsPtr(), C.size_t(hi-lo), &r)
		if err := statusError(status); err != nil {
			return err
		}
		defer C.semroute_classifications_free(r)
		out = append(out, classifications(r)...)
		return nil
	})
	return out, err
}

// ClassifyWindows classifies a document longer than the model reads at once,
// window by window (see WindowOptions); the document is never cut.
func (m *Model) ClassifyWindows(document string, opts WindowOptions) (Document, error) {
	options, err := windowOptions(opts)
	if err != nil {
		return Document{}, err
	}
	var out Document
	err = m.call(func(h *C.semroute_model) error {
		var r *C.semroute_windows
		if err := statusError(C.semroute_classify_windows(h, stringData(document), C.size_t(len(document)), &options, &r)); err != nil {
			return err
		}
		defer C.semroute_windows_free(r)
		out.ContentTokens = int(C.semroute_windows_content_tokens(r))
		for i := C.size_t(0); i < C.semroute_windows_count(r); i++ {
			w := C.semroute_windows_window(r, i)
			out.Windows = append(out.Windows, Window{
				TokenBegin: int(w.token_begin), TokenEnd: int(w.token_end), Begin: int(w.begin), End: int(w.end),
				Classification: Classification{
					ClassID: int(w.class_id), Label: C.GoString(w.label), Confidence: float32(w.confidence),
					Probabilities: copyFloats(w.probabilities, int(w.num_labels)),
				},
			})
		}
		return nil
	})
	return out, err
}

// ClassifyTokenWindows token-classifies a document longer than the model reads
// at once, window by window (see WindowOptions): one result for the whole
// document, every token from the window where it has the most context, and
// entities decoded once over the document (byte offsets into it).
func (m *Model) ClassifyTokenWindows(document string, opts WindowOptions) (TokenResult, error) {
	options, err := windowOptions(opts)
	if err != nil {
		return TokenResult{}, err
	}
	var out TokenResult
	err = m.call(func(h *C.semroute_model) error {
		var r *C.semroute_token_results
		if err := statusError(C.semroute_token_classify_windows(h, stringData(document), C.size_t(len(document)), &options, &r)); err != nil {
			return err
		}
		defer C.semroute_token_results_free(r)
		out = tokenResults(r)[0]
		return nil
	})
	return out, err
}

func windowOptions(opts WindowOptions) (C.semroute_window_options, error) {
	options := C.semroute_window_default_options()
	if opts.Size < 0 || opts.Overlap < 0 || opts.MaxDocumentTokens < 0 || opts.Size > math.MaxUint32 ||
		opts.Overlap > math.MaxUint32 {
		return options, &Error{Code: CodeInvalidArgument, Message: "window Size, Overlap and MaxDocumentTokens must be >= 0"}
	}
	options.size = C.uint32_t(opts.Size)
	options.overlap = C.uint32_t(opts.Overlap)
	options.max_document_tokens = C.uint64_t(opts.MaxDocumentTokens)
	return options, nil
}

// ClassifyTokens extracts entity spans (and per-token labels) from one text.
func (m *Model) ClassifyTokens(text string) (TokenResult, error) {
	results, err := m.ClassifyTokensBatch(context.Background(), []string{text})
	if err != nil {
		return TokenResult{}, err
	}
	return results[0], nil
}

// ClassifyTokensBatch token-classifies texts; the result i belongs to texts[i].
func (m *Model) ClassifyTokensBatch(ctx context.Context, texts []string) ([]TokenResult, error) {
	out := make([]TokenResult, 0, len(texts))
	err := m.chunked(ctx, len(texts), func(h *C.semroute_model, lo, hi int) error {
		b := pack(texts[lo:hi])
		var r *C.semroute_token_results
		if err := statusError(C.semroute_token_classify_batch(h, b.data(), b.offsetsPtr(), C.size_t(hi-lo), &r)); err != nil {
			return err
		}
		defer C.semroute_token_results_free(r)
		out = append(out, tokenResults(r)...)
		return nil
	})
	return out, err
}

// Embed embeds one text.
func (m *Model) Embed(text string) ([]float32, error) {
	results, err := m.EmbedBatch(context.Background(), []string{text})
	if err != nil {
		return nil, err
	}
	return results[0], nil
}

// EmbedBatch embeds texts; row i belongs to texts[i].
func (m *Model) EmbedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	dim := m.info.EmbeddingDim
	out := make([][]float32, 0, len(texts))
	err := m.chunked(ctx, len(texts), func(h *C.semroute_model, lo, hi int) error {
		b := pack(texts[lo:hi])
		flat := make([]float32, (hi-lo)*dim+1) // +1: never a nil buffer
		status := C.semroute_embed_batch(h, b.data(), b.offsetsPtr(), C.size_t(hi-lo),
			(*C.float)(unsafe.Pointer(&flat[0])), C.size_t(len(flat)))
		if err := statusError(status); err != nil {
			return err
		}
		for i := 0; i < hi-lo; i++ {
			out = append(out, flat[i*dim:(i+1)*dim:(i+1)*dim])
		}
		return nil
	})
	return out, err
}

// EmbedWithInput embeds texts as EmbedBatch does and says what each text was
// (tokens in, tokens read, truncated).
func (m *Model) EmbedWithInput(ctx context.Context, texts []string) ([]Embedding, error) {
	out := make([]Embedding, 0, len(texts))
	err := m.chunked(ctx, len(texts), func(h *C.semroute_model, lo, hi int) error {
		b := pack(texts[lo:hi])
		var r *C.semroute_embeddings
		if err := statusError(C.semroute_embed_batch_result(h, b.data(), b.offsetsPtr(), C.size_t(hi-lo), nil, &r)); err != nil {
			return err
		}
		defer C.semroute_embeddings_free(r)
		dim := int(C.semroute_embeddings_dimension(r))
		for i := 0; i < int(C.semroute_embeddings_count(r)); i++ {
			v := unsafe.Slice((*float32)(unsafe.Pointer(C.semroute_embeddings_vector(r, C.size_t(i)))), dim)
			out = append(out, Embedding{Vector: append([]float32(nil), v...),
				Input: inputUsage(C.semroute_embeddings_input(r, C.size_t(i)))})
		}
		return nil
	})
	return out, err
}

// Similarity is the cosine similarity of the embeddings of a and b.
func (m *Model) Similarity(a, b string) (float32, error) {
	var sim C.float
	err := m.call(func(h *C.semroute_model) error {
		return statusError(C.semroute_similarity(h, stringData(a), C.size_t(len(a)), stringData(b), C.size_t(len(b)), &sim))
	})
	return float32(sim), err
}

// TopK returns the k candidates most similar to query, best first.
func (m *Model) TopK(ctx context.Context, query string, candidates []string, k int) ([]Match, error) {
	return m.ranked(ctx, query, candidates, k, func(h *C.semroute_model, q *C.char, ql C.size_t, b *C.char,
		offsets *C.uint64_t, n, k C.size_t, indices *C.size_t, scores *C.float, found *C.size_t) *C.semroute_status {
		return C.semroute_top_k(h, q, ql, b, offsets, n, k, indices, scores, found)
	})
}

// Rerank returns the k documents most relevant to query by a pair scoring
// model (TaskPairScoring), best first; Score is the raw relevance logit.
func (m *Model) Rerank(ctx context.Context, query string, documents []string, k int) ([]Match, error) {
	return m.ranked(ctx, query, documents, k, func(h *C.semroute_model, q *C.char, ql C.size_t, b *C.char,
		offsets *C.uint64_t, n, k C.size_t, indices *C.size_t, scores *C.float, found *C.size_t) *C.semroute_status {
		return C.semroute_rerank(h, q, ql, b, offsets, n, k, indices, scores, found)
	})
}

type rankCall func(h *C.semroute_model, query *C.char, queryLength C.size_t, candidates *C.char, offsets *C.uint64_t,
	count, k C.size_t, indices *C.size_t, scores *C.float, found *C.size_t) *C.semroute_status

// ranked runs semroute_top_k or semroute_rerank.
func (m *Model) ranked(ctx context.Context, query string, candidates []string, k int, call rankCall) ([]Match, error) {
	if k < 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "k must be >= 0"}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k > len(candidates) {
		k = len(candidates)
	}
	indices := make([]C.size_t, k+1)
	scores := make([]C.float, k+1)
	var found C.size_t
	err := m.call(func(h *C.semroute_model) error {
		b := pack(candidates)
		return statusError(call(h, stringData(query), C.size_t(len(query)), b.data(), b.offsetsPtr(),
			C.size_t(len(candidates)), C.size_t(k), &indices[0], &scores[0], &found))
	})
	if err != nil {
		return nil, err
	}
	out := make([]Match, int(found))
	for i := range out {
		out[i] = Match{Index: int(indices[i]), Score: float32(scores[i])}
	}
	return out, nil
}

// ScorePairs scores (queries[i], documents[i]) pairs with a pair scoring
// model (TaskPairScoring): one raw relevance logit each, higher = more relevant.
func (m *Model) ScorePairs(ctx context.Context, queries, documents []string) ([]PairScore, error) {
	if len(queries) != len(documents) {
		return nil, &Error{Code: CodeInvalidArgument, Message: "queries and documents differ in length"}
	}
	out := make([]PairScore, 0, len(queries))
	err := m.chunked(ctx, len(queries), func(h *C.semroute_model, lo, hi int) error {
		q, d := pack(queries[lo:hi]), pack(documents[lo:hi])
		var r *C.semroute_pair_scores
		if err := statusError(C.semroute_score_pairs(h, q.data(), q.offsetsPtr(), d.data(), d.offsetsPtr(),
			C.size_t(hi-lo), &r)); err != nil {
			return err
		}
		defer C.semroute_pair_scores_free(r)
		for i := 0; i < int(C.semroute_pair_scores_count(r)); i++ {
			out = append(out, PairScore{Score: float32(C.semroute_pair_scores_score(r, C.size_t(i))),
				Input: inputUsage(C.semroute_pair_scores_input(r, C.size_t(i)))})
		}
		return nil
	})
	return out, err
}

// Tokenize tokenizes text as the model does, with or without special tokens.
func (m *Model) Tokenize(text string, addSpecialTokens bool) (Tokens, error) {
	var out Tokens
	err := m.call(func(h *C.semroute_model) error {
		special := C.int(0)
		if addSpecialTokens {
			special = 1
		}
		var t *C.semroute_tokens
		if err := statusError(C.semroute_tokenize(h, stringData(text), C.size_t(len(text)), special, &t)); err != nil {
			return err
		}
		defer C.semroute_tokens_free(t)
		n := int(C.semroute_tokens_count(t))
		if n == 0 {
			return nil
		}
		ids := unsafe.Slice(C.semroute_tokens_ids(t), n)
		offsets := unsafe.Slice(C.semroute_tokens_offsets(t), 2*n)
		for i := 0; i < n; i++ {
			out.IDs = append(out.IDs, int32(ids[i]))
			out.Offsets = append(out.Offsets, [2]int{int(offsets[2*i]), int(offsets[2*i+1])})
			out.Tokens = append(out.Tokens, C.GoString(C.semroute_tokens_token(t, C.size_t(i))))
		}
		return nil
	})
	return out, err
}

// call runs fn on the open handle, holding Close off until it returns.
func (m *Model) call(fn func(h *C.semroute_model) error) error {
	return m.do(func() error { return fn(m.handle) })
}

// chunked runs fn on the open handle over [0, n) in chunks.
func (m *Model) chunked(ctx context.Context, n int, fn func(h *C.semroute_model, lo, hi int) error) error {
	return inChunks(ctx, n, func(lo, hi int) error {
		return m.call(func(h *C.semroute_model) error { return fn(h, lo, hi) })
	})
}

// inChunks runs fn over [0, n) in chunks of batchChunk texts, checking ctx
// before each (an empty batch still makes one call, which checks the handle).
func inChunks(ctx context.Context, n int, fn func(lo, hi int) error) error {
	for lo := 0; ; {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := lo + batchChunk
		if hi > n {
			hi = n
		}
		if err := fn(lo, hi); err != nil {
			return err
		}
		if lo = hi; lo >= n {
			return nil
		}
	}
}

// cStrings are C copies of Go strings, freed together.
type cStrings struct{ list []*C.char }

// get copies s ("" gives NULL).
func (c *cStrings) get(s string) *C.char {
	if s == "" {
		return nil
	}
	p := C.CString(s)
	c.list = append(c.list, p)
	return p
}

func (c *cStrings) free() {
	for _, p := range c.list {
		C.free(unsafe.Pointer(p))
	}
	c.list = nil
}

// modelParams converts opts (nil: the defaults); its strings live in strings.
func modelParams(opts *Options, strings *cStrings) (C.semroute_model_params, error) {
	if opts == nil {
		opts = &Options{}
	}
	params := C.semroute_model_default_params()
	params.task = C.int32_t(opts.Task)
	params.device = strings.get(opts.Device)
	params.dtype = strings.get(opts.DType)
	params.threads = C.int32_t(opts.Threads)
	params.max_length = C.uint32_t(opts.MaxLength)
	params.truncation = C.int32_t(opts.Truncation)
	params.overflow = C.int32_t(opts.Overflow)
	if opts.CountInputTokens {
		params.count_input_tokens = 1
	}
	params.tokenizer = strings.get(opts.Tokenizer)
	params.pooling = C.int32_t(opts.Pooling)
	if opts.NoNormalize {
		params.normalize = 0
	}
	params.dimension = C.uint32_t(opts.Dimension)
	params.layer = C.uint32_t(opts.Layer)
	params.prompt = strings.get(opts.Prompt)
	params.adapter = strings.get(opts.Adapter)
	if opts.UnmergedAdapter {
		params.merge_adapter = 0
	}
	if opts.Threads < 0 || opts.MaxLength < 0 || opts.Dimension < 0 || opts.Layer < 0 || opts.MaxBatch < 0 ||
		opts.MaxWait < 0 || opts.MaxBatch > 1<<20 || opts.MaxWait > time.Second {
		return params, &Error{Code: CodeInvalidArgument,
			Message: "Threads, MaxLength, Dimension, Layer, MaxBatch and MaxWait must be >= 0 (MaxWait <= 1s)"}
	}
	params.max_batch = C.uint32_t(opts.MaxBatch)
	params.max_wait_us = C.uint32_t(opts.MaxWait / time.Microsecond)
	return params, nil
}

func statusError(s *C.semroute_status) error {
	if s == nil {
		return nil
	}
	defer C.semroute_status_free(s)
	return &Error{Code: Code(C.semroute_status_code(s)), Message: C.GoString(C.semroute_status_message(s))}
}

func describe(h *C.semroute_model) Info {
	info := Info{
		Task:         Task(C.semroute_model_task(h)),
		ModelType:    C.GoString(C.semroute_model_type(h)),
		Architecture: C.GoString(C.semroute_model_architecture(h)),
		HiddenSize:   int(C.semroute_model_hidden_size(h)),
		MaxLength:    int(C.semroute_model_max_length(h)),
		EmbeddingDim: int(C.semroute_model_embedding_dim(h)),
		MultiLabel:   C.semroute_model_multi_label(h) != 0,
	}
	for i := C.size_t(0); i < C.semroute_model_num_labels(h); i++ {
		info.Labels = append(info.Labels, C.GoString(C.semroute_model_label(h, i)))
	}
	return info
}

func classifications(r *C.semroute_classifications) []Classification {
	out := make([]Classification, int(C.semroute_classifications_count(r)))
	for i := range out {
		ci := C.size_t(i)
		var n C.size_t
		p := C.semroute_classifications_probabilities(r, ci, &n)
		out[i] = Classification{
			ClassID:       int(C.semroute_classifications_class_id(r, ci)),
			Label:         C.GoString(C.semroute_classifications_label(r, ci)),
			Confidence:    float32(C.semroute_classifications_confidence(r, ci)),
			Probabilities: copyFloats(p, int(n)),
			Input:         inputUsage(C.semroute_classifications_input(r, ci)),
		}
	}
	return out
}

func inputUsage(u *C.semroute_input_usage) InputUsage {
	if u == nil {
		return InputUsage{}
	}
	return InputUsage{InputTokens: int(u.input_tokens), ProcessedTokens: int(u.processed_tokens), Truncated: u.truncated != 0}
}

func tokenResults(r *C.semroute_token_results) []TokenResult {
	out := make([]TokenResult, int(C.semroute_token_results_count(r)))
	for i := range out {
		var n C.size_t
		out[i].Entities = entities(C.semroute_token_results_entities(r, C.size_t(i), &n), n)
		out[i].Input = inputUsage(C.semroute_token_results_input(r, C.size_t(i)))
		if p := C.semroute_token_results_tokens(r, C.size_t(i), &n); p != nil {
			for _, t := range unsafe.Slice(p, int(n)) { // pointers to structs: see the header's growth rule
				out[i].Tokens = append(out[i].Tokens, TokenLabel{
					TokenID: int(t.token_id), LabelID: int(t.label_id), Label: C.GoString(t.label),
					Begin: int(t.begin), End: int(t.end), Probability: float32(t.probability),
				})
			}
		}
	}
	return out
}

func entities(p **C.semroute_entity, n C.size_t) []Entity {
	if p == nil {
		return nil
	}
	out := make([]Entity, 0, int(n))
	for _, e := range unsafe.Slice(p, int(n)) {
		out = append(out, Entity{
			Type: C.GoString(e._type), Begin: int(e.begin), End: int(e.end),
			Text: C.GoStringN(e.text, C.int(e.text_length)), Score: float32(e.score),
		})
	}
	return out
}

func copyFloats(p *C.float, n int) []float32 {
	out := make([]float32, n)
	if n > 0 {
		copy(out, unsafe.Slice((*float32)(unsafe.Pointer(p)), n))
	}
	return out
}

// stringData points at a string's bytes without copying them (C reads them
// during the call only); nil for "".
func stringData(s string) *C.char {
	if len(s) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(*(**byte)(unsafe.Pointer(&s))))
}

// packed is a batch in the C API's layout: one byte buffer and len+1 offsets.
type packed struct {
	bytes   []byte
	offsets []uint64
}

func pack(texts []string) packed {
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	b := packed{bytes: make([]byte, 0, size), offsets: make([]uint64, 1, len(texts)+1)}
	for _, t := range texts {
		b.bytes = append(b.bytes, t...)
		b.offsets = append(b.offsets, uint64(len(b.bytes)))
	}
	return b
}

func (b *packed) data() *C.char {
	if len(b.bytes) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b.bytes[0]))
}

func (b *packed) offsetsPtr() *C.uint64_t { return (*C.uint64_t)(unsafe.Pointer(&b.offsets[0])) }

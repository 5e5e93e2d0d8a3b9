package candlecompat

// The owned-instance interface and the legacy functions added after the
// 2026-08-22 snapshot, declared as the router's Go files declare them.

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stddef.h>

char* candle_instance_load_backbone(const char* options_json);
char* candle_instance_load_sequence(const char* options_json);
char* candle_instance_load_label_scores(const char* options_json);
char* candle_instance_load_token(const char* options_json);
char* candle_instance_load_nli(const char* options_json);
char* candle_instance_load_hallucination(const char* options_json);
char* candle_instance_load_embedding(const char* options_json);
char* candle_instance_load_guard(const char* options_json);
char* candle_instance_load_generative(const char* options_json);
char* candle_instance_load_pair_scorer(const char* options_json, const char* selection_json);
char* candle_instance_clone(uint64_t handle);
char* candle_instance_close(uint64_t handle);
char* candle_instance_info(uint64_t handle);
char* candle_instance_bind_head(uint64_t handle, const char* head_path, const char* task);
char* candle_instance_embedding_descriptor(uint64_t handle, size_t layer, size_t dimension);
char* candle_instance_sequence(uint64_t handle, const char* text);
char* candle_instance_score(uint64_t handle, const char* text);
char* candle_instance_classify_windows(uint64_t handle, const char* text, size_t size, size_t overlap);
char* candle_instance_score_windows(uint64_t handle, const char* text, size_t size, size_t overlap);
char* candle_instance_tokens(uint64_t handle, const char* text);
char* candle_instance_token_windows(uint64_t handle, const char* text, size_t size, size_t overlap);
char* candle_instance_nli(uint64_t handle, const char* premise, const char* hypothesis);
char* candle_instance_hallucination(uint64_t handle, const char* context, const char* question, const char* answer, float threshold);
char* candle_instance_embedding(uint64_t handle, const char* text, size_t dimension, size_t layer);
char* candle_instance_image(uint64_t handle, const uint8_t* bytes, size_t length, size_t dimension);
char* candle_instance_audio(uint64_t handle, const float* samples, size_t length, size_t mel_bins, size_t frames, size_t dimension);
char* candle_instance_text_windows(unsigned long long handle, const char* text, size_t max_tokens);
char* candle_instance_guard(uint64_t handle, const char* text, const char* mode);
char* candle_instance_generative(uint64_t handle, const char* text, const char* adapter, const char* categories, bool multi_token);
char* candle_instance_score_pairs(uint64_t handle, const char* pairs_json);
void candle_instance_free_string(char* value);

typedef struct { int* offsets; int window_count; bool error; } TextWindowsResult;
int embedding_text_exceeds_window(const char* text, const char* model_type);
TextWindowsResult get_text_windows(const char* text, int max_length);
void free_text_windows(TextWindowsResult result);
bool init_mmbert_32k_intent_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_factcheck_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_jailbreak_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_feedback_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_pii_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_modality_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// InstanceError is an {"error": "<code>: <message>"} answer.
type InstanceError struct{ Code, Message string }

func (e *InstanceError) Error() string { return "candle " + e.Code + ": " + e.Message }

// ErrInstanceClosed is the "closed" code, as the router's Go code maps it.
var ErrInstanceClosed = errors.New("candle: native instance is closed")

// decode reads one JSON answer into out (nil: the value is ignored) and frees it.
func decode(p *C.char, out interface{}) error {
	if p == nil {
		return errors.New("null instance response")
	}
	defer C.candle_instance_free_string(p)
	var env struct {
		Value json.RawMessage `json:"value"`
		Error *string         `json:"error"`
	}
	if err := json.Unmarshal([]byte(C.GoString(p)), &env); err != nil {
		return err
	}
	if env.Error != nil {
		code, msg, found := strings.Cut(*env.Error, ": ")
		if !found {
			return &InstanceError{"load", *env.Error}
		}
		if code == "closed" {
			return ErrInstanceClosed
		}
		return &InstanceError{code, msg}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Value, out)
}

// cstrings passes Go strings as C strings for one call; a NUL inside one is
// refused before C sees it (as the router's Go code does).
func cstrings(fn func(args []*C.char) *C.char, ss ...string) (*C.char, error) {
	args := make([]*C.char, len(ss))
	for i, s := range ss {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, &InstanceError{"configuration", "string contains NUL"}
		}
		args[i] = C.CString(s)
		defer C.free(unsafe.Pointer(args[i]))
	}
	return fn(args), nil
}

func call(out interface{}, fn func(args []*C.char) *C.char, ss ...string) error {
	p, err := cstrings(fn, ss...)
	if err != nil {
		return err
	}
	return decode(p, out)
}

// InstanceOptions are the loaders' options (omitempty, as upstream sends them).
type InstanceOptions struct {
	ModelPath              string `json:"model_path"`
	ModelType              string `json:"model_type,omitempty"`
	Device                 string `json:"device,omitempty"`
	Precision              string `json:"precision,omitempty"`
	MaxInputTokens         int    `json:"max_input_tokens,omitempty"`
	DocumentMaxInputTokens int    `json:"document_max_input_tokens,omitempty"`
	Overflow               string `json:"overflow,omitempty"`
}

// Load calls candle_instance_load_<task> and returns the handle.
func Load(task string, opts InstanceOptions) (uint64, error) {
	body, err := json.Marshal(opts)
	if err != nil {
		return 0, err
	}
	var handle uint64
	err = call(&handle, func(a []*C.char) *C.char {
		switch task {
		case "backbone":
			return C.candle_instance_load_backbone(a[0])
		case "sequence":
			return C.candle_instance_load_sequence(a[0])
		case "label_scores":
			return C.candle_instance_load_label_scores(a[0])
		case "token":
			return C.candle_instance_load_token(a[0])
		case "nli":
			return C.candle_instance_load_nli(a[0])
		case "hallucination":
			return C.candle_instance_load_hallucination(a[0])
		case "embedding":
			return C.candle_instance_load_embedding(a[0])
		case "guard":
			return C.candle_instance_load_guard(a[0])
		case "generative":
			return C.candle_instance_load_generative(a[0])
		}
		return C.candle_instance_load_pair_scorer(a[0], a[1])
	}, string(body), `{"layer":0,"dimension":0}`)
	return handle, err
}

func Clone(h uint64) (uint64, error) {
	var out uint64
	return out, decode(C.candle_instance_clone(C.uint64_t(h)), &out)
}

func Close(h uint64) error { return decode(C.candle_instance_close(C.uint64_t(h)), nil) }

// Info is candle_instance_info's value.
type Info struct {
	ResourceID             uint64         `json:"resource_id"`
	Task                   string         `json:"task"`
	ModelType              string         `json:"model_type"`
	Device                 string         `json:"device"`
	Precision              string         `json:"precision"`
	ArchitecturalMaxTokens int            `json:"architectural_max_tokens"`
	MaxInputTokens         int            `json:"max_input_tokens"`
	DocumentMaxInputTokens int            `json:"document_max_input_tokens"`
	Overflow               string         `json:"overflow"`
	Labels                 []string       `json:"labels"`
	Modalities             []string       `json:"modalities"`
	AvailableDimensions    []int          `json:"available_dimensions"`
	PairScorer             *PairSelection `json:"pair_scorer"`
}

// PairSelection is a pair scorer's exit.
type PairSelection struct {
	Layer     int `json:"layer"`
	Dimension int `json:"dimension"`
}

func GetInfo(h uint64) (Info, error) {
	var out Info
	return out, decode(C.candle_instance_info(C.uint64_t(h)), &out)
}

func BindHead(h uint64, dir, task string) (uint64, error) {
	var out uint64
	return out, call(&out, func(a []*C.char) *C.char { return C.candle_instance_bind_head(C.uint64_t(h), a[0], a[1]) },
		dir, task)
}

// InputMetadata is what one input was.
type InputMetadata struct {
	InputTokens     int  `json:"input_tokens"`
	ProcessedTokens int  `json:"processed_tokens"`
	Truncated       bool `json:"truncated"`
}

// Distribution is the value of sequence and nli calls.
type Distribution struct {
	Class         int           `json:"class"`
	Confidence    float32       `json:"confidence"`
	Probabilities []float32     `json:"probabilities"`
	Labels        []string      `json:"labels"`
	Input         InputMetadata `json:"input"`
}

func Sequence(h uint64, text string) (Distribution, error) {
	var out Distribution
	return out, call(&out, func(a []*C.char) *C.char { return C.candle_instance_sequence(C.uint64_t(h), a[0]) }, text)
}

func InstanceNLI(h uint64, premise, hypothesis string) (Distribution, error) {
	var out Distribution
	return out, call(&out, func(a []*C.char) *C.char { return C.candle_instance_nli(C.uint64_t(h), a[0], a[1]) },
		premise, hypothesis)
}

// LabelScores is the value of score calls.
type LabelScores struct {
	Scores []float32     `json:"scores"`
	Labels []string      `json:"labels"`
	Input  InputMetadata `json:"input"`
}

func Score(h uint64, text string) (LabelScores, error) {
	var out LabelScores
	return out, call(&out, func(a []*C.char) *C.char { return C.candle_instance_score(C.uint64_t(h), a[0]) }, text)
}

// Window is one window of a windowed distribution or score call.
type Window struct {
	Start         int       `json:"start"`
	End           int       `json:"end"`
	Probabilities []float32 `json:"probabilities"`
	Scores        []float32 `json:"scores"`
}

// Windowed is the value of classify_windows and score_windows.
type Windowed struct {
	Windows       []Window      `json:"windows"`
	Labels        []string      `json:"labels"`
	ContentTokens int           `json:"content_tokens"`
	Input         InputMetadata `json:"input"`
}

func ClassifyWindows(h uint64, text string, size, overlap int, scores bool) (Windowed, error) {
	var out Windowed
	return out, call(&out, func(a []*C.char) *C.char {
		if scores {
			return C.candle_instance_score_windows(C.uint64_t(h), a[0], C.size_t(size), C.size_t(overlap))
		}
		return C.candle_instance_classify_windows(C.uint64_t(h), a[0], C.size_t(size), C.size_t(overlap))
	}, text)
}

// InstanceSpan is a token span (byte offsets).
type InstanceSpan struct {
	Text       string  `json:"text"`
	Start      int     `json:"start"`
	End        int     `json:"end"`
	Confidence float32 `json:"confidence"`
	Label      string  `json:"label"`
}

// TokenOutput is the value of tokens and token_windows calls.
type TokenOutput struct {
	Spans         []InstanceSpan `json:"spans"`
	Input         InputMetadata  `json:"input"`
	OffsetUnit    string         `json:"offset_unit"`
	ContentTokens int            `json:"content_tokens"`
	Windows       [][2]int       `json:"windows"`
}

func Tokens(h uint64, text string) (TokenOutput, error) {
	var out TokenOutput
	return out, call(&out, func(a []*C.char) *C.char { return C.candle_instance_tokens(C.uint64_t(h), a[0]) }, text)
}

func TokenWindows(h uint64, text string, size, overlap int) (TokenOutput, error) {
	var out TokenOutput
	return out, call(&out, func(a []*C.char) *C.char {
		return C.candle_instance_token_windows(C.uint64_t(h), a[0], C.size_t(size), C.size_t(overlap))
	}, text)
}

// Hallucination is the value of hallucination calls.
type Hallucination struct {
	HasHallucination bool           `json:"has_hallucination"`
	Confidence       float32        `json:"confidence"`
	Spans            []InstanceSpan `json:"spans"`
	Input            InputMetadata  `json:"input"`
	OffsetUnit       string         `json:"offset_unit"`
}

func InstanceDetect(h uint64, context, question, answer string, threshold float32) (Hallucination, error) {
	var out Hallucination
	return out, call(&out, func(a []*C.char) *C.char {
		return C.candle_instance_hallucination(C.uint64_t(h), a[0], a[1], a[2], C.float(threshold))
	}, context, question, answer)
}

// EmbeddingOutput is the value of embedding calls.
type EmbeddingOutput struct {
	Values []float32     `json:"values"`
	Input  InputMetadata `json:"input"`
}

func Embed(h uint64, text string, dimension, layer int) (EmbeddingOutput, error) {
	var out EmbeddingOutput
	return out, call(&out, func(a []*C.char) *C.char {
		return C.candle_instance_embedding(C.uint64_t(h), a[0], C.size_t(dimension), C.size_t(layer))
	}, text)
}

func TextWindows(h uint64, text string, maxTokens int) ([][2]int, error) {
	var out [][2]int
	return out, call(&out, func(a []*C.char) *C.char {
		return C.candle_instance_text_windows(C.ulonglong(h), a[0], C.size_t(maxTokens))
	}, text)
}

// Unimplemented calls every entry point semroute answers with capability
// (image, audio, guard, generative, descriptor, pair scores) on h.
func Unimplemented(h uint64) []error {
	b := []byte{1}
	f := []float32{0}
	var errs []error
	errs = append(errs, decode(C.candle_instance_image(C.uint64_t(h), (*C.uint8_t)(unsafe.Pointer(&b[0])), 1, 0), nil))
	errs = append(errs, decode(C.candle_instance_audio(C.uint64_t(h), (*C.float)(unsafe.Pointer(&f[0])), 1, 1, 1, 0), nil))
	errs = append(errs, call(nil, func(a []*C.char) *C.char { return C.candle_instance_guard(C.uint64_t(h), a[0], a[1]) }, "x", "input"))
	errs = append(errs, call(nil, func(a []*C.char) *C.char {
		return C.candle_instance_generative(C.uint64_t(h), a[0], a[1], a[2], false)
	}, "x", "", `["a","b"]`))
	errs = append(errs, decode(C.candle_instance_embedding_descriptor(C.uint64_t(h), 0, 0), nil))
	errs = append(errs, call(nil, func(a []*C.char) *C.char { return C.candle_instance_score_pairs(C.uint64_t(h), a[0]) },
		`[{"query":"q","document":"d"}]`))
	return errs
}

// LoadPairScorer calls candle_instance_load_pair_scorer with a selection.
func LoadPairScorer(opts InstanceOptions, layer, dimension int) (uint64, error) {
	body, err := json.Marshal(opts)
	if err != nil {
		return 0, err
	}
	selection, _ := json.Marshal(PairSelection{layer, dimension})
	var handle uint64
	return handle, call(&handle, func(a []*C.char) *C.char { return C.candle_instance_load_pair_scorer(a[0], a[1]) },
		string(body), string(selection))
}

// TextPair is one pair to score.
type TextPair struct {
	Query    string `json:"query"`
	Document string `json:"document"`
}

// PairScores is the value of score_pairs.
type PairScores struct {
	Scores []float32       `json:"scores"`
	Inputs []InputMetadata `json:"inputs"`
}

func ScorePairs(h uint64, pairs []TextPair) (PairScores, error) {
	var out PairScores
	body, err := json.Marshal(pairs)
	if err != nil {
		return out, err
	}
	if pairs == nil {
		body = []byte("[]")
	}
	return out, call(&out, func(a []*C.char) *C.char { return C.candle_instance_score_pairs(C.uint64_t(h), a[0]) },
		string(body))
}

// Descriptor returns candle_instance_embedding_descriptor's raw JSON value.
func Descriptor(h uint64, layer, dimension int) (string, error) {
	var raw json.RawMessage
	err := decode(C.candle_instance_embedding_descriptor(C.uint64_t(h), C.size_t(layer), C.size_t(dimension)), &raw)
	return string(raw), err
}

// ---- legacy additions

func EmbeddingTextExceedsWindow(text, modelType string) int {
	t, m := C.CString(text), C.CString(modelType)
	defer C.free(unsafe.Pointer(t))
	defer C.free(unsafe.Pointer(m))
	return int(C.embedding_text_exceeds_window(t, m))
}

// GetTextWindows returns the byte ranges, or an error when the flag is set.
func GetTextWindows(text string, maxLength int) ([][2]int, error) {
	t := C.CString(text)
	defer C.free(unsafe.Pointer(t))
	r := C.get_text_windows(t, C.int(maxLength))
	defer C.free_text_windows(r)
	if r.error {
		return nil, errors.New("get_text_windows failed")
	}
	flat := unsafe.Slice((*C.int)(unsafe.Pointer(r.offsets)), int(r.window_count)*2)
	out := make([][2]int, r.window_count)
	for i := range out {
		out[i] = [2]int{int(flat[2*i]), int(flat[2*i+1])}
	}
	return out, nil
}

// InitWithContext calls init_mmbert_32k_<kind>_classifier_with_context.
func InitWithContext(kind, path string, limit int) bool {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	n := C.size_t(limit)
	switch kind {
	case "intent":
		return bool(C.init_mmbert_32k_intent_classifier_with_context(p, true, n))
	case "factcheck":
		return bool(C.init_mmbert_32k_factcheck_classifier_with_context(p, true, n))
	case "jailbreak":
		return bool(C.init_mmbert_32k_jailbreak_classifier_with_context(p, true, n))
	case "feedback":
		return bool(C.init_mmbert_32k_feedback_classifier_with_context(p, true, n))
	case "pii":
		return bool(C.init_mmbert_32k_pii_classifier_with_context(p, true, n))
	case "modality":
		return bool(C.init_mmbert_32k_modality_classifier_with_context(p, true, n))
	}
	panic(fmt.Sprintf("unknown kind %q", kind))
}

//go:build cgo

package semroute

/*
#include <stdlib.h>
#include <semroute/semroute.h>
*/
import "C"

import (
	"context"
	"time"
	"unsafe"
)

// Engine is a multi-task engine: one base model and several task adapters
// run in one shared pass. Safe for concurrent use.
type Engine struct {
	guard
	handle *C.semroute_engine
}

// LoadEngine loads base and the task adapters. opts (may be nil) supplies
// the device, dtype, threads, max length, truncation, tokenizer and dynamic
// batching (MaxBatch, MaxWait: concurrent calls asking for the same tasks
// are coalesced).
func LoadEngine(base string, tasks []EngineTask, opts *Options) (*Engine, error) {
	if len(tasks) == 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "an engine needs at least one task"}
	}
	var cstrings []*C.char
	defer func() {
		for _, p := range cstrings {
			C.free(unsafe.Pointer(p))
		}
	}()
	cstr := func(s string) *C.char {
		p := C.CString(s)
		cstrings = append(cstrings, p)
		return p
	}
	specs := make([]C.semroute_engine_task, len(tasks))
	for i, t := range tasks {
		specs[i] = C.semroute_engine_task{struct_size: C.uint32_t(C.sizeof_semroute_engine_task),
			name: cstr(t.Name), adapter: cstr(t.Adapter), task_kind: C.int32_t(t.Kind)}
	}
	params := C.semroute_model_default_params()
	if opts != nil {
		if opts.Device != "" {
			params.device = cstr(opts.Device)
		}
		if opts.DType != "" {
			params.dtype = cstr(opts.DType)
		}
		if opts.Tokenizer != "" {
			params.tokenizer = cstr(opts.Tokenizer)
		}
		params.threads = C.int32_t(opts.Threads)
		params.max_length = C.uint32_t(opts.MaxLength)
		params.truncation = C.int32_t(opts.Truncation)
		if opts.MaxBatch < 0 || opts.MaxBatch > 1<<20 || opts.MaxWait < 0 || opts.MaxWait > time.Second {
			return nil, &Error{Code: CodeInvalidArgument, Message: "MaxBatch and MaxWait must be >= 0 (MaxWait <= 1s)"}
		}
		params.max_batch = C.uint32_t(opts.MaxBatch)
		params.max_wait_us = C.uint32_t(opts.MaxWait / time.Microsecond)
	}
	var handle *C.semroute_engine
	status := C.semroute_engine_load(cstr(base), &specs[0], C.size_t(len(specs)), &params, &handle)
	if err := statusError(status); err != nil {
		return nil, err
	}
	return &Engine{handle: handle}, nil
}

// Close releases the engine after the calls in flight; idempotent.
func (e *Engine) Close() error {
	e.close(func() { C.semroute_engine_free(e.handle) })
	return nil
}

// Classify answers the named tasks (none: all) for every text: result i
// holds texts[i]'s answers in task order.
func (e *Engine) Classify(ctx context.Context, texts []string, tasks ...string) ([][]TaskAnswer, error) {
	names := pack(tasks)
	return classifyInChunks(ctx, &e.guard, texts, func(b *packed, count int, r **C.semroute_task_results) *C.semroute_status {
		return C.semroute_engine_classify(e.handle, b.data(), b.offsetsPtr(), C.size_t(count), names.data(),
			names.offsetsPtr(), C.size_t(len(tasks)), r)
	})
}

// Unified is the DualPathUnifiedClassifier, configured by a YAML file: per
// task a fine-tuned model, a LoRA adapter or both, and a path policy. Safe
// for concurrent use.
type Unified struct {
	guard
	handle *C.semroute_unified
}

// LoadUnified loads the classifier a YAML configuration describes.
func LoadUnified(config string) (*Unified, error) {
	path := C.CString(config)
	defer C.free(unsafe.Pointer(path))
	var handle *C.semroute_unified
	if err := statusError(C.semroute_unified_load(path, &handle)); err != nil {
		return nil, err
	}
	return &Unified{handle: handle}, nil
}

// Close releases the classifier after the calls in flight; idempotent.
func (u *Unified) Close() error {
	u.close(func() { C.semroute_unified_free(u.handle) })
	return nil
}

// Classify answers the requested tasks for every text (req may be nil: all
// tasks): result i holds texts[i]'s answers, each with its path and reason.
func (u *Unified) Classify(ctx context.Context, texts []string, req *UnifiedRequest) ([][]TaskAnswer, error) {
	if req == nil {
		req = &UnifiedRequest{}
	}
	names := pack(req.Tasks)
	accuracy := C.int(0)
	if req.PreferAccuracy {
		accuracy = 1
	}
	return classifyInChunks(ctx, &u.guard, texts, func(b *packed, count int, r **C.semroute_task_results) *C.semroute_status {
		return C.semroute_unified_classify(u.handle, b.data(), b.offsetsPtr(), C.size_t(count), names.data(),
			names.offsetsPtr(), C.size_t(len(req.Tasks)), accuracy, r)
	})
}

// taskCall runs one chunk of texts through the C API.
type taskCall func(b *packed, count int, out **C.semroute_task_results) *C.semroute_status

// classifyInChunks runs call over texts in chunks, under g, copying the
// answers out of C memory.
func classifyInChunks(ctx context.Context, g *guard, texts []string, call taskCall) ([][]TaskAnswer, error) {
	out := make([][]TaskAnswer, 0, len(texts))
	err := inChunks(ctx, len(texts), func(lo, hi int) error {
		return g.do(func() error {
			b := pack(texts[lo:hi])
			var r *C.semroute_task_results
			if err := statusError(call(&b, hi-lo, &r)); err != nil {
				return err
			}
			defer C.semroute_task_results_free(r)
			out = append(out, taskAnswers(r)...)
			return nil
		})
	})
	return out, err
}

func taskAnswers(r *C.semroute_task_results) [][]TaskAnswer {
	out := make([][]TaskAnswer, int(C.semroute_task_results_count(r)))
	for i := range out {
		var n C.size_t
		p := C.semroute_task_results_answers(r, C.size_t(i), &n)
		if p == nil {
			continue
		}
		for _, a := range unsafe.Slice(p, int(n)) {
			answer := TaskAnswer{
				Task: C.GoString(a.task), Kind: Task(a.task_kind), Path: Path(a.path),
				Reason: C.GoString(a.reason), LatencyMS: float64(a.latency_ms),
				Risk: float32(a.risk), Flagged: a.flagged != 0, Entities: entities(a.entities, a.num_entities),
			}
			if a.error != nil {
				answer.Error = C.GoString(a.error)
				answer.ErrorCode = Code(a.error_code)
			}
			if answer.Kind == TaskSequenceClassification && a.error == nil {
				answer.Classification = Classification{
					ClassID: int(a.class_id), Label: C.GoString(a.label), Confidence: float32(a.confidence),
					Probabilities: copyFloats(a.probabilities, int(a.num_labels)),
				}
			}
			out[i] = append(out[i], answer)
		}
	}
	return out
}

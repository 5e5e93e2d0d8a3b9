//go:build cgo

package semroute

/*
#include <stdlib.h>
#include <semroute/semroute.h>
*/
import "C"

import (
	"encoding/json"
	"unsafe"
)

// Runtime serves models under the vLLM Semantic Router's model runtime
// contract in process (docs/runtime.md): the JSON requests and answers of
// semroute serve's /v1/classify, /v1/embeddings, /v1/rerank, /v1/bundle,
// /v1/models and /health. Add its models first; Call is then safe for
// concurrent use.
type Runtime struct {
	guard
	handle *C.semroute_runtime
}

// RuntimeReply is one answer: its HTTP status, its JSON body and its
// Server-Timing phases ("" for GET paths).
type RuntimeReply struct {
	Status       int
	Body         []byte
	ServerTiming string
}

// NewRuntime makes an empty runtime; 0 takes the defaults (64 bundle tasks,
// 64 requests in flight per model).
func NewRuntime(maxBundleTasks, maxQueue uint32) (*Runtime, error) {
	var handle *C.semroute_runtime
	if err := statusError(C.semroute_runtime_create(C.uint32_t(maxBundleTasks), C.uint32_t(maxQueue), &handle)); err != nil {
		return nil, err
	}
	return &Runtime{handle: handle}, nil
}

// AddModel loads the model directory dir under name (opts as Load's). A
// model whose files differ from its manifest or whose golden answers miss is
// added as failed: its card and /health say why.
func (r *Runtime) AddModel(name, dir string, opts *Options) error {
	var strings cStrings
	defer strings.free()
	params, err := modelParams(opts, &strings)
	if err != nil {
		return err
	}
	cname, cdir := C.CString(name), C.CString(dir)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(cdir))
	return r.do(func() error { return statusError(C.semroute_runtime_add_model(r.handle, cname, cdir, &params)) })
}

// Head is one head of a model of bound heads: its name and task directory.
type Head struct {
	Name, Dir string
}

// AddHeads loads one task model of heads bound to the encoder in
// backboneDir (the first head is the primary): one forward serves them all.
func (r *Runtime) AddHeads(name, backboneDir string, heads []Head, opts *Options) error {
	if len(heads) == 0 {
		return &Error{Code: CodeInvalidArgument, Message: "AddHeads: no heads"}
	}
	var strings cStrings
	defer strings.free()
	params, err := modelParams(opts, &strings)
	if err != nil {
		return err
	}
	names := make([]*C.char, len(heads))
	dirs := make([]*C.char, len(heads))
	for i, h := range heads {
		names[i], dirs[i] = strings.get(h.Name), strings.get(h.Dir)
	}
	cNames := C.malloc(C.size_t(len(heads)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	cDirs := C.malloc(C.size_t(len(heads)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(cNames)
	defer C.free(cDirs)
	copy(unsafe.Slice((**C.char)(cNames), len(heads)), names)
	copy(unsafe.Slice((**C.char)(cDirs), len(heads)), dirs)
	cname, cdir := strings.get(name), strings.get(backboneDir)
	return r.do(func() error {
		return statusError(C.semroute_runtime_add_heads(r.handle, cname, cdir, C.size_t(len(heads)),
			(**C.char)(cNames), (**C.char)(cDirs), &params))
	})
}

// Call sends one request: POST with a body (any JSON-marshalable value, or
// raw JSON as []byte), GET with nil.
func (r *Runtime) Call(path string, body any) (RuntimeReply, error) {
	var data []byte
	method := "GET"
	if body != nil {
		method = "POST"
		if raw, ok := body.([]byte); ok {
			data = raw
		} else {
			var err error
			if data, err = json.Marshal(body); err != nil {
				return RuntimeReply{}, &Error{Code: CodeInvalidArgument, Message: err.Error()}
			}
		}
	}
	cmethod, cpath := C.CString(method), C.CString(path)
	defer C.free(unsafe.Pointer(cmethod))
	defer C.free(unsafe.Pointer(cpath))
	var reply RuntimeReply
	err := r.do(func() error {
		var cbody *C.char
		if len(data) > 0 {
			cbody = (*C.char)(C.CBytes(data))
			defer C.free(unsafe.Pointer(cbody))
		}
		var out *C.semroute_runtime_reply
		if err := statusError(C.semroute_runtime_call(r.handle, cmethod, cpath, cbody, C.size_t(len(data)), &out)); err != nil {
			return err
		}
		defer C.semroute_runtime_reply_free(out)
		var length C.size_t
		text := C.semroute_runtime_reply_body(out, &length)
		reply = RuntimeReply{Status: int(C.semroute_runtime_reply_status(out)), Body: C.GoBytes(unsafe.Pointer(text), C.int(length)),
			ServerTiming: C.GoString(C.semroute_runtime_reply_server_timing(out))}
		return nil
	})
	return reply, err
}

// Decide asks a decision model (Vela 2.0 or Decision 2.0, docs/decisions.md)
// questions about a state: POST /v1/decisions. questions is the raw JSON
// object {id: question} (raw, so the questions keep the order they are asked
// in); state is text, an object or an array (any JSON-marshalable value);
// options as the request's (deadline_ms, max_tokens, return_meta; nil for
// none). It returns the response's raw JSON (answers in the order asked); a
// refused request is an *Error (400 CodeInvalidArgument, 404 CodeNotFound,
// 422 CodeUnsupported, else CodeInternal) with the contract's code and message.
func (r *Runtime) Decide(model string, state any, questions json.RawMessage, options map[string]any) ([]byte, error) {
	body := map[string]any{"model": model, "state": state, "questions": questions}
	if options != nil {
		body["options"] = options
	}
	reply, err := r.Call("/v1/decisions", body)
	if err != nil {
		return nil, err
	}
	if reply.Status != 200 {
		var refused struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(reply.Body, &refused)
		code := map[int]Code{400: CodeInvalidArgument, 404: CodeNotFound, 422: CodeUnsupported}[reply.Status]
		if code == 0 {
			code = CodeInternal
		}
		return nil, &Error{Code: code, Message: refused.Error.Code + ": " + refused.Error.Message}
	}
	return reply.Body, nil
}

// Close releases the runtime after the calls in flight; idempotent.
func (r *Runtime) Close() error {
	r.close(func() { C.semroute_runtime_free(r.handle) })
	return nil
}

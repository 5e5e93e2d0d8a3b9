//go:build cgo

package semroute

/*
#include <stdlib.h>
#include <semroute/semroute.h>
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

// Router routes OpenAI chat-completions requests through a YAML config of
// signals, decisions and actions (see docs/router.md). Safe
// for concurrent use.
type Router struct {
	guard
	handle *C.semroute_router
}

// LoadRouter loads the router a YAML configuration describes (and the
// models its signals name).
func LoadRouter(config string) (*Router, error) {
	path := C.CString(config)
	defer C.free(unsafe.Pointer(path))
	var handle *C.semroute_router
	if err := statusError(C.semroute_router_load(path, &handle)); err != nil {
		return nil, err
	}
	return &Router{handle: handle}, nil
}

// Close releases the router after the calls in flight; idempotent.
func (r *Router) Close() error {
	r.close(func() { C.semroute_router_free(r.handle) })
	return nil
}

// Route routes one request (the JSON body of a chat-completions call).
// metadata (may be nil) is what conditions see as meta.<key>: the user's
// role, request headers …
func (r *Router) Route(request []byte, metadata map[string]string) (*Route, error) {
	if len(request) == 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "an empty request"}
	}
	var meta []byte
	if metadata != nil {
		var err error
		if meta, err = json.Marshal(metadata); err != nil {
			return nil, &Error{Code: CodeInvalidArgument, Message: "metadata: " + err.Error()}
		}
	}
	var out *Route
	err := r.do(func() error {
		var metaPtr *C.char
		if meta != nil {
			metaPtr = (*C.char)(unsafe.Pointer(&meta[0]))
		}
		var route *C.semroute_route
		status := C.semroute_router_route(r.handle, (*C.char)(unsafe.Pointer(&request[0])), C.size_t(len(request)),
			metaPtr, C.size_t(len(meta)), &route)
		if err := statusError(status); err != nil {
			return err
		}
		out = &Route{
			Decision:   C.GoString(C.semroute_route_decision(route)),
			Confidence: float64(C.semroute_route_confidence(route)),
			Blocked:    C.semroute_route_blocked(route) != 0,
			Model:      C.GoString(C.semroute_route_model(route)),
			Request:    json.RawMessage(C.GoString(C.semroute_route_request_json(route))),
			Headers:    map[string]string{},
			JSON:       json.RawMessage(C.GoString(C.semroute_route_json(route))),
		}
		out.CacheHit = C.semroute_route_cache_hit(route) != 0
		out.CheckAnswer = C.semroute_route_check_answer(route) != 0
		if response := C.semroute_route_response_json(route); response != nil {
			out.Response = json.RawMessage(C.GoString(response))
		}
		for i := C.size_t(0); i < C.semroute_route_header_count(route); i++ {
			out.Headers[C.GoString(C.semroute_route_header_name(route, i))] =
				C.GoString(C.semroute_route_header_value(route, i))
		}
		if out.Headers["x-semroute-cache"] == "miss" || out.CheckAnswer {
			// Kept for StoreAnswer (it holds the prompt's embedding) and CheckAnswer.
			key := &routeHandle{route: route}
			runtime.SetFinalizer(key, func(k *routeHandle) { C.semroute_route_free(k.route) })
			out.handle = key
		} else {
			C.semroute_route_free(route)
		}
		return nil
	})
	return out, err
}

// routeHandle holds a routed request's C handle after a cache miss or for an answer check.
type routeHandle struct {
	route *C.semroute_route
}

// StoreAnswer caches the model's answer (a chat.completion JSON object) to a
// request routed with a cache miss, for similar prompts of the same
// decision. It reports false when the route has nothing to store (no cache,
// a hit, a blocked request).
func (r *Router) StoreAnswer(route *Route, answer []byte) (bool, error) {
	key, ok := route.handle.(*routeHandle)
	if !ok || key == nil || route.Headers["x-semroute-cache"] != "miss" {
		return false, nil
	}
	if len(answer) == 0 {
		return false, &Error{Code: CodeInvalidArgument, Message: "an empty answer"}
	}
	var stored C.int
	err := r.do(func() error {
		return statusError(C.semroute_router_store_answer(r.handle, key.route,
			(*C.char)(unsafe.Pointer(&answer[0])), C.size_t(len(answer)), &stored))
	})
	runtime.KeepAlive(key)
	return stored != 0, err
}

// CheckAnswer opens a stream that checks the model's answer to a routed
// request whose decision asked for it (route.CheckAnswer) against
// groundTruth, or when it is empty the request's tool messages; the
// question is the prompt, the config's stop_severity applies. sse: the
// chunks are the raw SSE stream.
func (r *Router) CheckAnswer(route *Route, groundTruth string, sse bool) (*Stream, error) {
	key, ok := route.handle.(*routeHandle)
	if !ok || key == nil || !route.CheckAnswer {
		return nil, &Error{Code: CodeInvalidArgument, Message: "the route's decision does not ask for an answer check"}
	}
	var s *Stream
	g := []byte(groundTruth)
	err := r.do(func() error {
		var h *C.semroute_halluc_stream
		status := C.semroute_router_check_answer(r.handle, key.route, cBytes(g), C.size_t(len(g)), cBool(sse), &h)
		if err := statusError(status); err != nil {
			return err
		}
		s = newStream(h)
		return nil
	})
	runtime.KeepAlive(key)
	return s, err
}

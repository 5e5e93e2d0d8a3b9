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
// signals, decisions and actions (see the README's "Router" section). Safe
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
		if response := C.semroute_route_response_json(route); response != nil {
			out.Response = json.RawMessage(C.GoString(response))
		}
		for i := C.size_t(0); i < C.semroute_route_header_count(route); i++ {
			out.Headers[C.GoString(C.semroute_route_header_name(route, i))] =
				C.GoString(C.semroute_route_header_value(route, i))
		}
		if out.Headers["x-semroute-cache"] == "miss" {
			// Kept for StoreAnswer: it holds the prompt's embedding.
			key := &cacheKey{route: route}
			runtime.SetFinalizer(key, func(k *cacheKey) { C.semroute_route_free(k.route) })
			out.answerKey = key
		} else {
			C.semroute_route_free(route)
		}
		return nil
	})
	return out, err
}

// cacheKey holds a routed request's C handle after a cache miss.
type cacheKey struct {
	route *C.semroute_route
}

// StoreAnswer caches the model's answer (a chat.completion JSON object) to a
// request routed with a cache miss, for similar prompts of the same
// decision. It reports false when the route has nothing to store (no cache,
// a hit, a blocked request).
func (r *Router) StoreAnswer(route *Route, answer []byte) (bool, error) {
	key, ok := route.answerKey.(*cacheKey)
	if !ok || key == nil {
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

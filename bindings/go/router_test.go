//go:build cgo

package semroute

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var exampleRouter = filepath.Join("..", "..", "examples", "router")

func loadExampleRouter(t *testing.T) *Router {
	t.Helper()
	r, err := LoadRouter(filepath.Join(exampleRouter, "router.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func exampleRequest(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(exampleRouter, "requests", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRouterRoutesTheExampleRequests(t *testing.T) {
	checkRoutesTheExampleRequests(t, loadExampleRouter(t))
}

// checkRoutesTheExampleRequests: the example config's decisions, rewrites,
// headers and lazy signals, in process or through a sidecar.
func checkRoutesTheExampleRequests(t *testing.T, r RequestRouter) {
	route, err := r.Route(exampleRequest(t, "math.json"), map[string]string{"role": "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if route.Decision != "stem" || route.Model != "reasoning-llm" || route.Blocked {
		t.Fatalf("math: %+v", route)
	}
	var request map[string]any
	if err := json.Unmarshal(route.Request, &request); err != nil {
		t.Fatal(err)
	}
	if request["reasoning_effort"] != "high" || request["temperature"] != 0.2 {
		t.Errorf("rewritten request: %s", route.Request)
	}
	if route.Headers["x-semroute-decision"] != "stem" {
		t.Errorf("headers: %v", route.Headers)
	}

	blocked, err := r.Route(exampleRequest(t, "jailbreak.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !blocked.Blocked || blocked.Decision != "block_jailbreak" || len(blocked.Response) == 0 {
		t.Fatalf("jailbreak: %+v", blocked)
	}
	var trace struct {
		Trace struct {
			Signals []struct {
				Name     string `json:"name"`
				Computed bool   `json:"computed"`
			} `json:"signals"`
		} `json:"trace"`
	}
	if err := json.Unmarshal(blocked.JSON, &trace); err != nil {
		t.Fatal(err)
	}
	for _, s := range trace.Trace.Signals {
		if s.Computed != (s.Name == "jailbreak") {
			t.Errorf("signal %s computed=%v: only the jailbreak model should run", s.Name, s.Computed)
		}
	}
}

func TestRouterErrorsAndClose(t *testing.T) {
	if _, err := LoadRouter("/nonexistent/router.yaml"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing config: %v", err)
	}
	r := loadExampleRouter(t)
	var e *Error
	if _, err := r.Route([]byte("{"), nil); !errors.As(err, &e) || e.Code != CodeInvalidArgument {
		t.Errorf("bad JSON: %v", err)
	}
	if _, err := r.Route(nil, nil); !errors.As(err, &e) || e.Code != CodeInvalidArgument {
		t.Errorf("empty request: %v", err)
	}
	r.Close()
	if _, err := r.Route(exampleRequest(t, "math.json"), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestRouterConcurrentRoutes(t *testing.T) {
	r := loadExampleRouter(t)
	files := []string{"math.json", "code.json", "card.json", "urgent.json", "jailbreak.json"}
	want := map[string]string{}
	for _, f := range files {
		route, err := r.Route(exampleRequest(t, f), nil)
		if err != nil {
			t.Fatal(err)
		}
		want[f] = route.Decision
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				f := files[(g+i)%len(files)]
				route, err := r.Route(exampleRequest(t, f), nil)
				if err != nil || route.Decision != want[f] {
					t.Errorf("%s: %v %v", f, route, err)
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestRouterCachesAnswers(t *testing.T) { checkCachesAnswers(t, loadExampleRouter(t)) }

// checkCachesAnswers: an answer stored after a miss answers the same prompt.
func checkCachesAnswers(t *testing.T, r RequestRouter) {
	request := exampleRequest(t, "math.json")
	first, err := r.Route(request, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.CacheHit || first.Headers["x-semroute-cache"] != "miss" {
		t.Fatalf("first: %+v", first)
	}
	stored, err := r.StoreAnswer(first, []byte(`{"id":"cached-1","object":"chat.completion","choices":[]}`))
	if err != nil || !stored {
		t.Fatalf("StoreAnswer: %v %v", stored, err)
	}
	second, err := r.Route(request, nil)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		ID string `json:"id"`
	}
	if !second.CacheHit || json.Unmarshal(second.Response, &answer) != nil || answer.ID != "cached-1" {
		t.Fatalf("second: %+v", second)
	}
	if stored, err := r.StoreAnswer(second, []byte(`{}`)); stored || err != nil {
		t.Errorf("a hit has nothing to store: %v %v", stored, err)
	}
}

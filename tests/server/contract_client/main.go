// A client of the model runtime contract written from the contract alone,
// with Go's standard library, talking as the vLLM Semantic Router's own
// client does: HTTP/1.1 on a Unix socket, the api_version major checked on
// /health, cards keyed by served name from /v1/models, deadlines sent as
// options.deadline_ms, bundles split at limits.max_bundle_tasks, 429 read as
// overloaded and 503 as unavailable. It starts `semroute serve` on a config
// that makes each of those happen and checks what it gets.
//
//	go run . SEMROUTE_CLI REPO_DIR
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

var errOverloaded = errors.New("overloaded")
var errUnavailable = errors.New("unavailable")

type client struct{ http *http.Client }

func newClient(socket string) *client {
	transport := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: 2 * time.Second}
			return d.DialContext(ctx, "unix", socket)
		}}
	return &client{http: &http.Client{Transport: transport}}
}

// do sends body (nil: GET) and decodes a 200 into out; 429 and 503 are the
// router's overloaded and unavailable, other statuses rejected or failed.
func (c *client) do(ctx context.Context, path string, body any, out any) (http.Header, error) {
	method, reader := http.MethodGet, io.Reader(nil)
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		method, reader = http.MethodPost, bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://model-runtime"+path, reader)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return resp.Header, fmt.Errorf("%w: %s", errOverloaded, data)
	case resp.StatusCode == http.StatusServiceUnavailable:
		return resp.Header, fmt.Errorf("%w: %s", errUnavailable, data)
	case resp.StatusCode != http.StatusOK:
		return resp.Header, fmt.Errorf("rejected (%d): %s", resp.StatusCode, data)
	}
	return resp.Header, json.Unmarshal(data, out)
}

// health reads GET /health, whose body says the states with 200 and 503 alike.
func (c *client) health(ctx context.Context, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://model-runtime/health", nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// deadlineOptions: the context's time left, to the microsecond.
func deadlineOptions(ctx context.Context) map[string]any {
	options := map[string]any{"return_meta": true}
	if d, ok := ctx.Deadline(); ok {
		options["deadline_ms"] = float64(time.Until(d).Microseconds()) / 1000
	}
	return options
}

type card struct {
	ID       string   `json:"id"`
	Surfaces []string `json:"surfaces"`
	Ready    bool     `json:"ready"`
	Heads    []struct {
		Name   string   `json:"name"`
		Kind   string   `json:"kind"`
		Labels []string `json:"labels"`
	} `json:"heads"`
}

var failures []string

func check(ok bool, format string, args ...any) {
	if !ok {
		failures = append(failures, fmt.Sprintf(format, args...))
		fmt.Println("FAIL", fmt.Sprintf(format, args...))
	}
}

func main() {
	cli, repo := os.Args[1], os.Args[2]
	work, _ := os.MkdirTemp("", "semroute-contract-client-")
	defer os.RemoveAll(work)
	broken := filepath.Join(work, "broken")
	copyDir(filepath.Join(repo, "models/domain"), broken)
	os.WriteFile(filepath.Join(broken, "SHA256SUMS"), []byte(strings.Repeat("0", 64)+"  config.json\n"), 0o644)
	socket := filepath.Join(work, "runtime.sock")
	config := fmt.Sprintf("unix_socket: %s\nlimits: {max_queue: 1, max_bundle_tasks: 2}\nmodels:\n"+
		"  domain: {path: %s/models/domain, max_batch: 8, max_wait_us: 300000}\n  pii: %s/models/pii\n  broken: %s\n",
		socket, repo, repo, broken)
	os.WriteFile(filepath.Join(work, "serve.yaml"), []byte(config), 0o600)
	server := exec.Command(cli, "serve", filepath.Join(work, "serve.yaml"))
	server.Stderr = os.Stderr
	if err := server.Start(); err != nil {
		panic(err)
	}
	defer server.Process.Kill()
	c := newClient(socket)
	ctx := context.Background()

	// Readiness: poll /health every 500 ms, as the router does, until it answers
	// (200 all ready, 503 with each model's state).
	var health struct {
		APIVersion string                    `json:"api_version"`
		Models     map[string]map[string]any `json:"models"`
	}
	for start := time.Now(); ; time.Sleep(500 * time.Millisecond) {
		if c.health(ctx, &health) == nil {
			break
		}
		if time.Since(start) > 60*time.Second {
			panic("no /health in 60 s")
		}
	}
	check(strings.HasPrefix(health.APIVersion, "2."), "api_version %q: major 2", health.APIVersion)
	check(health.Models["domain"]["status"] == "ready" && health.Models["broken"]["status"] == "failed",
		"per-model states %v", health.Models)

	var list struct {
		APIVersion string `json:"api_version"`
		Data       []card `json:"data"`
		Limits     struct {
			MaxBundleTasks int `json:"max_bundle_tasks"`
		} `json:"limits"`
	}
	_, err := c.do(ctx, "/v1/models", nil, &list)
	check(err == nil, "/v1/models: %v", err)
	cards := map[string]card{}
	for _, cd := range list.Data {
		cards[cd.ID] = cd
	}
	domain := cards["domain"]
	check(domain.Ready && len(domain.Heads) == 1 && domain.Heads[0].Kind == "sequence" && len(domain.Heads[0].Labels) == 14,
		"the domain card %+v", domain)
	check(list.Limits.MaxBundleTasks == 2, "limits %+v", list.Limits)

	// Classify as the router does: item objects, the head by name, the deadline as deadline_ms.
	timed, cancel := context.WithTimeout(ctx, 5*time.Second)
	var answer struct {
		Labels  []string `json:"labels"`
		Results []struct {
			Label string `json:"label"`
			Error string `json:"error"`
			Input struct {
				Tokens int `json:"tokens"`
			} `json:"input"`
		} `json:"results"`
		Usage struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
		Meta struct {
			ModelSHA256 string `json:"model_sha256"`
		} `json:"meta"`
	}
	headers, err := c.do(timed, "/v1/classify", map[string]any{"model": "domain", "head": domain.Heads[0].Name,
		"input": []map[string]string{{"text": "What is the derivative of x^2?"}}, "options": deadlineOptions(timed)}, &answer)
	cancel()
	check(err == nil && len(answer.Results) == 1 && answer.Results[0].Label != "" && answer.Usage.InputTokens > 0 &&
		len(answer.Meta.ModelSHA256) == 64, "classify: %v %+v", err, answer)
	check(strings.Contains(headers.Get("Server-Timing"), "total;dur="), "Server-Timing %q", headers.Get("Server-Timing"))
	_, err = c.do(ctx, "/v1/classify", map[string]any{"model": "domain", "input": []map[string]string{{"text": "x"}},
		"options": map[string]any{"deadline_ms": 0.001}}, &answer)
	check(err == nil && answer.Results[0].Error == "deadline_exceeded", "deadline_ms 0.001: %v %+v", err, answer)

	// Bundles split at the card's limit: three tasks in two bundles, ids kept.
	tasks := []map[string]any{
		{"id": "1", "classify": map[string]any{"model": "domain", "input": []map[string]string{{"text": "a"}}}},
		{"id": "2", "classify": map[string]any{"model": "pii", "input": []map[string]string{{"text": "Call Ann"}}}},
		{"id": "3", "classify": map[string]any{"model": "broken", "input": []map[string]string{{"text": "b"}}}}}
	var ids []string
	var statuses []int
	for start := 0; start < len(tasks); start += list.Limits.MaxBundleTasks {
		end := start + list.Limits.MaxBundleTasks
		if end > len(tasks) {
			end = len(tasks)
		}
		var bundle struct {
			Results []struct {
				ID     string `json:"id"`
				Status int    `json:"status"`
			} `json:"results"`
		}
		_, err := c.do(ctx, "/v1/bundle", map[string]any{"tasks": tasks[start:end]}, &bundle)
		check(err == nil, "bundle: %v", err)
		for _, r := range bundle.Results {
			ids, statuses = append(ids, r.ID), append(statuses, r.Status)
		}
	}
	check(fmt.Sprint(ids) == "[1 2 3]" && fmt.Sprint(statuses) == "[200 200 503]", "bundles: %v %v", ids, statuses)
	_, err = c.do(ctx, "/v1/bundle", map[string]any{"tasks": tasks}, &struct{}{})
	check(err != nil && strings.Contains(err.Error(), "413"), "a bundle over the limit: %v", err)

	// A failed model is unavailable; a full queue overloaded.
	_, err = c.do(ctx, "/v1/classify", map[string]any{"model": "broken", "input": "x"}, &answer)
	check(errors.Is(err, errUnavailable), "a failed model: %v", err)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = c.do(ctx, "/v1/classify", map[string]any{"model": "domain", "input": fmt.Sprint("text ", i)}, &struct{}{})
		}(i)
	}
	wg.Wait()
	overloaded := 0
	for _, e := range errs {
		if errors.Is(e, errOverloaded) {
			overloaded++
		}
	}
	check(overloaded > 0, "max_queue 1 and 4 callers: no 429 (%v)", errs)

	if len(failures) > 0 {
		fmt.Printf("%d failures\n", len(failures))
		os.Exit(1)
	}
	fmt.Println("contract client: ok")
}

func copyDir(from, to string) {
	os.MkdirAll(to, 0o755)
	entries, _ := os.ReadDir(from)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(from, e.Name()))
		os.WriteFile(filepath.Join(to, e.Name()), data, 0o644)
	}
}

//go:build cgo

package semroute

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The sidecar client runs the checks the in-process handles run, against a
// `semroute serve` this file starts ($SEMROUTE_CLI, set by scripts/test-go.sh)
// on the same test models, on TCP and on a Unix socket.

var sidecarOnce struct {
	sync.Once
	tcp, unix *Client
	err       error
}

func sidecarClients(t *testing.T) []*Client {
	t.Helper()
	cli := os.Getenv("SEMROUTE_CLI")
	if cli == "" {
		t.Skip("SEMROUTE_CLI is not set (scripts/test-go.sh sets it)")
	}
	sidecarOnce.Do(func() { sidecarOnce.tcp, sidecarOnce.unix, sidecarOnce.err = startSidecar(cli) })
	if sidecarOnce.err != nil {
		t.Fatal(sidecarOnce.err)
	}
	return []*Client{sidecarOnce.tcp, sidecarOnce.unix}
}

// startSidecar serves the test models and the example router; TestMain
// stops it (stopSidecar) when the tests end.
func startSidecar(cli string) (*Client, *Client, error) {
	dir, err := os.MkdirTemp("", "semroute-sidecar-")
	if err != nil {
		return nil, nil, err
	}
	router, err := filepath.Abs(filepath.Join(exampleRouter, "router.yaml"))
	if err != nil {
		return nil, nil, err
	}
	socket := filepath.Join(dir, "serve.sock")
	intent := filepath.Join(modelsDir, "intent")
	config := fmt.Sprintf("listen: 127.0.0.1:0\nunix_socket: %s\nmodels:\n  intent: %s\n  pii: %s\n"+
		"  embed: {path: %s, task: embedding}\n  slow: {path: %s, max_batch: 8, max_wait_us: 300000}\n"+
		"routers:\n  default: %s\ndetectors:\n  halluc: %s\n", socket, intent, filepath.Join(modelsDir, "pii"),
		intent, intent, router, filepath.Join(modelsDir, "halluc"))
	path := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(cli, "serve", path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	sidecarProcess = cmd
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		return nil, nil, fmt.Errorf("semroute serve did not start: %q %v", line, err)
	}
	addr := strings.Fields(line)[1]
	tcp, err := NewClient(addr, nil)
	if err != nil {
		return nil, nil, err
	}
	unix, err := NewClient("unix://"+socket, nil)
	return tcp, unix, err
}

// sidecarProcess is stopped (SIGTERM) when the tests end.
var sidecarProcess *exec.Cmd

func stopSidecar() {
	if sidecarProcess != nil && sidecarProcess.Process != nil {
		_ = sidecarProcess.Process.Signal(os.Interrupt)
		_ = sidecarProcess.Wait()
	}
}

func TestSidecarClassifyEqualsTheCLI(t *testing.T) {
	labels := load(t, "intent", nil).Info().Labels
	for _, c := range sidecarClients(t) {
		checkClassifyEqualsTheCLI(t, c.Model("intent"), labels)
		checkBadTextsAreErrors(t, c.Model("intent"))
	}
}

func TestSidecarTokensEqualTheCLI(t *testing.T) {
	for _, c := range sidecarClients(t) {
		checkTokensEqualTheCLI(t, c.Model("pii"))
	}
}

func TestSidecarEmbeddingsEqualTheCLI(t *testing.T) {
	for _, c := range sidecarClients(t) {
		checkEmbeddingsEqualTheCLI(t, c.Model("embed"))
	}
}

func TestSidecarRoutesAndCaches(t *testing.T) {
	for _, c := range sidecarClients(t) {
		checkRoutesTheExampleRequests(t, c.Router(""))
	}
	checkCachesAnswers(t, sidecarClients(t)[0].Router("default"))
}

func TestSidecarDetectorEqualsTheCLI(t *testing.T) {
	for _, c := range sidecarClients(t) {
		checkDetectorEqualsTheCLI(t, c.Detector("halluc"))
	}
}

// A context deadline travels to the sidecar (x-semroute-timeout-ms): the
// request, still waiting for its batch when it passes, is not computed there.
func TestSidecarHonoursTheContextDeadline(t *testing.T) {
	c := sidecarClients(t)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Model("slow").ClassifyBatch(ctx, []string{"x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past the deadline: %v", err)
	}
	// The sidecar answers it when its batch is taken (at 300 ms, later on a
	// loaded machine): its item deadline_exceeded if it was not computed.
	const answered = `semroute_item_errors_total{endpoint="/v1/classify",error="deadline_exceeded"} 1`
	var metrics []byte
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		metrics = nil
		if err := c.call(context.Background(), "GET", "/metrics", nil, &metrics, nil); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(metrics), answered) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sidecar computed the request anyway (no deadline_exceeded within 30 s):\n%s", metrics)
		}
	}
}

func TestSidecarManyGoroutines(t *testing.T) {
	m := sidecarClients(t)[0].Model("intent")
	texts := []string{"integrate x^2", "a binding contract", "cell biology", "hello"}
	want, err := m.ClassifyBatch(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	classifyConcurrently(t, m, texts, want, 20, func(got, want Classification) bool {
		return got.Label == want.Label && near(float64(got.Confidence), float64(want.Confidence))
	})
}

func TestSidecarErrors(t *testing.T) {
	c := sidecarClients(t)[0]
	if _, err := c.Model("missing").Classify("x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := c.Model("pii").Classify("x"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a token model asked to classify: %v", err)
	}
	if _, err := c.Router("").Route([]byte("{"), nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad JSON: %v", err)
	}
	if err := c.Ready(context.Background()); err != nil {
		t.Errorf("Ready: %v", err)
	}
	if _, err := NewClient("ftp://x", nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a bad address: %v", err)
	}
	down, _ := NewClient("http://127.0.0.1:1", nil)
	if _, err := down.Model("intent").Classify("x"); err == nil {
		t.Errorf("no server: no error")
	}
}

// Sidecar against in process: the same model classifying the same prompt
// (each call numbered, so that no two calls send the same text: the
// sidecar computes identical inputs once, which would flatter it),
// through the Go package's in-process Model (cgo) and through its sidecar
// client over TCP and a Unix socket, at 1 / 8 / 64 concurrent callers.
// Prints throughput, p50 and p99 per mode (run.sh starts the server): the
// medians of -rounds rounds that take the modes in turn, so a drift of the
// machine hits every mode alike. Then the transport's floor: GET /ready's
// round trip through the client, no model involved.
//
//	servebench -model DIR -tcp http://127.0.0.1:PORT -unix /path.sock [-seconds 5] [-rounds 3] [-batch 8]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	semroute "github.com/semroute/semroute/bindings/go"
)

type result struct {
	perSecond, p50, p99 float64 // calls/s, ms, ms
}

// measure runs `callers` goroutines calling classify for `d` and reports.
func measure(classify func() error, callers int, d time.Duration) (result, error) {
	var mu sync.Mutex
	var latencies []float64
	var firstErr error
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []float64
			for time.Now().Before(deadline) {
				start := time.Now()
				if err := classify(); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				mine = append(mine, float64(time.Since(start).Microseconds())/1000)
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return result{}, firstErr
	}
	sort.Float64s(latencies)
	at := func(q float64) float64 { return latencies[int(q*float64(len(latencies)-1))] }
	return result{float64(len(latencies)) / d.Seconds(), at(0.5), at(0.99)}, nil
}

func main() {
	modelDir := flag.String("model", "", "the model directory (served as \"bench\")")
	tcp := flag.String("tcp", "", "the sidecar's http://host:port")
	unix := flag.String("unix", "", "the sidecar's Unix socket")
	seconds := flag.Float64("seconds", 5, "seconds per cell (split over the rounds)")
	rounds := flag.Int("rounds", 3, "rounds per cell, the modes in turn; medians are reported")
	batch := flag.Int("batch", 8, "dynamic batching (max batch) in process, as the server's config has it")
	prompt := flag.String("prompt", "What is the derivative of x^2 + 3x with respect to x?", "the prompt")
	flag.Parse()
	model, err := semroute.Load(*modelDir, &semroute.Options{MaxBatch: *batch, MaxWait: time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer model.Close()
	modes := []struct {
		name string
		m    semroute.SequenceClassifier
	}{{"in process", model}}
	for _, addr := range []string{*tcp, *unix} {
		if addr == "" {
			continue
		}
		url, name := addr, "sidecar, TCP"
		if addr == *unix {
			url, name = "unix://"+addr, "sidecar, Unix socket"
		}
		c, err := semroute.NewClient(url, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		modes = append(modes, struct {
			name string
			m    semroute.SequenceClassifier
		}{name, c.Model("bench")})
	}
	d := time.Duration(*seconds * float64(time.Second) / float64(*rounds))
	fmt.Printf("| callers | path | calls/s | p50 ms | p99 ms | throughput vs in process | p50 overhead ms |\n|---|---|---|---|---|---|---|\n")
	for _, callers := range []int{1, 8, 64} {
		per := make([][]result, len(modes))
		for round := 0; round < *rounds; round++ {
			for i, mode := range modes {
				m := mode.m
				_, _ = m.Classify(*prompt) // warm the path (and the connection pool)
				var calls atomic.Int64
				r, err := measure(func() error {
					text := fmt.Sprintf("%s (%d)", *prompt, calls.Add(1))
					_, err := m.ClassifyBatch(context.Background(), []string{text})
					return err
				}, callers, d)
				if err != nil {
					fmt.Fprintln(os.Stderr, mode.name, err)
					os.Exit(1)
				}
				per[i] = append(per[i], r)
			}
		}
		base := medianOf(per[0])
		for i, mode := range modes {
			r := medianOf(per[i])
			fmt.Printf("| %d | %s | %.0f | %.3f | %.3f | %.2fx | %+.3f |\n", callers, mode.name, r.perSecond, r.p50, r.p99,
				r.perSecond/base.perSecond, r.p50-base.p50)
		}
	}
	fmt.Printf("\n| transport floor: GET /ready, 1 caller | p50 ms | p99 ms |\n|---|---|---|\n")
	for _, addr := range []string{*tcp, "unix://" + *unix} {
		c, _ := semroute.NewClient(addr, nil)
		_ = c.Ready(context.Background())
		r, err := measure(func() error { return c.Ready(context.Background()) }, 1, d)
		if err != nil {
			fmt.Fprintln(os.Stderr, addr, err)
			os.Exit(1)
		}
		fmt.Printf("| %s | %.3f | %.3f |\n", addr, r.p50, r.p99)
	}
}

// medianOf takes each field's median over the rounds.
func medianOf(rs []result) result {
	field := func(get func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	return result{field(func(r result) float64 { return r.perSecond }), field(func(r result) float64 { return r.p50 }),
		field(func(r result) float64 { return r.p99 })}
}

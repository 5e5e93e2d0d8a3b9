//go:build cgo

package semroute

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// The runtime contract in process answers what the CLI answers for the same
// model, with the contract's shapes, errors and Server-Timing.
func TestRuntimeClassifyEqualsTheCLI(t *testing.T) {
	rt, err := NewRuntime(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if err := rt.AddModel("intent", filepath.Join(modelsDir, "intent"), nil); err != nil {
		t.Fatal(err)
	}
	want := cliClassifications(t)
	var texts []string
	for _, r := range want.Results {
		texts = append(texts, r.Text)
	}
	reply, err := rt.Call("/v1/classify", map[string]any{"model": "intent", "input": texts})
	if err != nil || reply.Status != 200 {
		t.Fatalf("classify: %v %d %s", err, reply.Status, reply.Body)
	}
	if !strings.Contains(reply.ServerTiming, "forward;dur=") {
		t.Errorf("Server-Timing %q", reply.ServerTiming)
	}
	var got struct {
		Labels  []string `json:"labels"`
		Results []struct {
			Label         string    `json:"label"`
			Probabilities []float64 `json:"probabilities"`
		} `json:"results"`
	}
	if err := json.Unmarshal(reply.Body, &got); err != nil || len(got.Results) != len(want.Results) {
		t.Fatalf("%v %s", err, reply.Body)
	}
	for i, w := range want.Results {
		if got.Results[i].Label != w.Label {
			t.Errorf("%q: %s, the CLI %s", w.Text, got.Results[i].Label, w.Label)
		}
		for k, label := range got.Labels {
			if math.Abs(got.Results[i].Probabilities[k]-w.Probabilities[label]) > 1e-5 {
				t.Errorf("%q %s: %v vs %v", w.Text, label, got.Results[i].Probabilities[k], w.Probabilities[label])
			}
		}
	}
	bad, err := rt.Call("/v1/classify", []byte(`{"model": "intent", "input": "x", "colour": 1}`))
	if err != nil || bad.Status != 400 || !strings.Contains(string(bad.Body), "invalid_request") {
		t.Errorf("an unknown field: %v %d %s", err, bad.Status, bad.Body)
	}
	health, err := rt.Call("/health", nil)
	if err != nil || health.Status != 200 {
		t.Errorf("/health: %v %d", err, health.Status)
	}
	if err := rt.AddModel("../x", filepath.Join(modelsDir, "intent"), nil); err == nil {
		t.Error("a name with a path in it was taken")
	}
}

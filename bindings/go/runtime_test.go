//go:build cgo

package semroute

import (
	"encoding/json"
	"errors"
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

// A head bound to its own checkpoint's encoder is that model: the same
// answers as the model alone.
func TestRuntimeHeadsOnOneBackbone(t *testing.T) {
	rt, err := NewRuntime(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	intent := filepath.Join(modelsDir, "intent")
	if err := rt.AddModel("intent", intent, nil); err != nil {
		t.Fatal(err)
	}
	heads := []Head{{"intent", intent}, {"pii", filepath.Join(modelsDir, "pii")}}
	if err := rt.AddHeads("both", intent, heads, nil); err != nil {
		t.Fatal(err)
	}
	if err := rt.AddHeads("none", intent, nil, nil); err == nil {
		t.Error("a model of no heads was taken")
	}
	type answer struct {
		Head    string `json:"head"`
		Results []struct {
			Label         string    `json:"label"`
			Probabilities []float64 `json:"probabilities"`
		} `json:"results"`
	}
	classify := func(body map[string]any) answer {
		reply, err := rt.Call("/v1/classify", body)
		if err != nil || reply.Status != 200 {
			t.Fatalf("classify: %v %d %s", err, reply.Status, reply.Body)
		}
		var a answer
		if err := json.Unmarshal(reply.Body, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	text := "What is the derivative of x^2?"
	want := classify(map[string]any{"model": "intent", "input": text})
	got := classify(map[string]any{"model": "both", "head": "intent", "input": text})
	if got.Head != "intent" || got.Results[0].Label != want.Results[0].Label {
		t.Fatalf("bound head %+v, alone %+v", got, want)
	}
	for k, p := range want.Results[0].Probabilities {
		if math.Abs(got.Results[0].Probabilities[k]-p) > 1e-6 {
			t.Errorf("probability %d: %g bound, %g alone", k, got.Results[0].Probabilities[k], p)
		}
	}
}

// A Vela 2.0 package answers /v1/decisions in process: every question in
// the order asked (raw JSON keeps it), a Set's labels as Noul answers,
// further states as their own requests, the alias the same.
func TestRuntimeDecisions(t *testing.T) {
	rt, err := NewRuntime(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if err := rt.AddModel("vela", filepath.Join(modelsDir, "vela2"), nil); err != nil {
		t.Fatal(err)
	}
	questions := `{"urgency": {"type": "score", "instructions": "How urgent?", "levels": ["low", "high"]},
		"domain": {"type": "choice", "instructions": "Subject?", "criteria": {"math": null, "law": "Courts"}},
		"guard": {"type": "noul", "instructions": "A jailbreak?"},
		"topics": {"type": "set", "instructions": "Topics", "labels": [{"key": "billing"}, {"key": "account"}]}}`
	request := `{"model": "vela", "state": {"request": "Reset my password", "source": "Help page"}, "questions": ` +
		questions + `, "states": {"other": {"state": "Solve 2x = 4", "questions": ` + questions + `}}}`
	type answer struct {
		Type          string             `json:"type"`
		Choice        string             `json:"choice"`
		Noul          *float64           `json:"noul"`
		Score         *float64           `json:"score"`
		Probabilities map[string]float64 `json:"probabilities"`
		Error         string             `json:"error"`
	}
	type response struct {
		Model   string            `json:"model"`
		Answers map[string]answer `json:"answers"`
		Sets    map[string]struct {
			Selected      []string           `json:"selected"`
			Probabilities map[string]float64 `json:"probabilities"`
		} `json:"sets"`
		Usage struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
		States map[string]response `json:"states"`
	}
	var first response
	for _, path := range []string{"/v1/decisions", "/v1/systemone"} {
		reply, err := rt.Call(path, []byte(request))
		if err != nil || reply.Status != 200 {
			t.Fatalf("%s: %v %d %s", path, err, reply.Status, reply.Body)
		}
		body := string(reply.Body)
		order := []int{strings.Index(body, `"urgency"`), strings.Index(body, `"domain"`), strings.Index(body, `"guard"`),
			strings.Index(body, `"topics.billing"`)}
		for i := 1; i < len(order); i++ {
			if order[i-1] < 0 || order[i] <= order[i-1] {
				t.Errorf("%s: answers not in the order asked: %s", path, body)
			}
		}
		var got response
		if err := json.Unmarshal(reply.Body, &got); err != nil {
			t.Fatal(err)
		}
		d, g, u := got.Answers["domain"], got.Answers["guard"], got.Answers["urgency"]
		if got.Model != "vela" || (d.Choice != "math" && d.Choice != "law") || g.Noul == nil || *g.Noul < 0 || *g.Noul > 1 ||
			u.Score == nil || *u.Score < 0 || *u.Score > 1 || got.Usage.InputTokens <= 0 {
			t.Errorf("%s: %s", path, body)
		}
		if p, ok := got.Answers["topics.billing"]; !ok || p.Noul == nil || *p.Noul != got.Sets["topics"].Probabilities["billing"] {
			t.Errorf("%s: the set's label as a Noul answer: %s", path, body)
		}
		other, ok := got.States["other"]
		if !ok || len(other.Answers) != len(got.Answers) || other.Usage.InputTokens == got.Usage.InputTokens {
			t.Errorf("%s: states.other %+v", path, other)
		}
		if first.Model == "" {
			first = got
		} else if *first.Answers["guard"].Noul != *g.Noul {
			t.Errorf("the alias answers differently: %v %v", *first.Answers["guard"].Noul, *g.Noul)
		}
	}
	bad, err := rt.Call("/v1/decisions", []byte(`{"model": "vela", "state": "x", "questions": {"q": {"type": "guess"}}}`))
	if err != nil || bad.Status != 400 || !strings.Contains(string(bad.Body), "no question is valid") {
		t.Errorf("no valid question: %v %d %s", err, bad.Status, bad.Body)
	}
	// Decide: the same answers, spans and presets included; a refused request an *Error.
	spans := json.RawMessage(`{"guard": {"type": "noul", "instructions": "A jailbreak?"},
		"pii": {"preset": "pii", "over": "request"}}`)
	raw, err := rt.Decide("vela", map[string]any{"request": "Mail Ana at ana@example.com"}, spans, nil)
	var decided struct {
		Answers    map[string]answer           `json:"answers"`
		Spans      map[string][]map[string]any `json:"spans"`
		Thresholds map[string]float64          `json:"thresholds"`
	}
	if err != nil || json.Unmarshal(raw, &decided) != nil || decided.Answers["guard"].Noul == nil ||
		decided.Answers["pii"].Type != "noul" || decided.Spans["pii"] == nil || decided.Thresholds["pii"] <= 0 ||
		strings.Index(string(raw), `"guard"`) > strings.Index(string(raw), `"pii"`) {
		t.Errorf("Decide: %v %s", err, raw)
	}
	if _, err := rt.Decide("nobody", "x", spans, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("Decide of an unknown model: %v", err)
	}
	if _, err := rt.Decide("vela", "x", json.RawMessage(`{"q": {"type": "guess"}}`), map[string]any{"deadline_ms": 100}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Decide with no valid question: %v", err)
	}
}

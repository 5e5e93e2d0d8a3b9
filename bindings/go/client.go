package semroute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Client talks to a `semroute serve` sidecar over HTTP, on TCP or a Unix
// socket, with the standard library only (it builds without cgo). Its
// RemoteModel, RemoteUnified and RemoteRouter satisfy the same interfaces
// as the in-process Model, Unified and Router (interfaces.go). Safe for
// concurrent use.
type Client struct {
	base  string
	http  *http.Client
	token string
}

// ClientOptions configure a Client; the zero value (or nil) is no token and
// a 30 s timeout per request.
type ClientOptions struct {
	Token   string        // sent as "Authorization: Bearer <token>"
	Timeout time.Duration // per request; 0 = 30 s
}

// maxTimeoutMS is the longest x-semroute-timeout-ms the sidecar accepts.
const maxTimeoutMS = 3_600_000

// ErrBusy is returned (wrapped) when the sidecar's queue for a model is full
// (HTTP 429): retry after a moment.
var ErrBusy = errors.New("semroute: the sidecar is busy (429)")

// NewClient connects to "http://host:port" or "unix:///path/to/socket".
func NewClient(address string, opts *ClientOptions) (*Client, error) {
	if opts == nil {
		opts = &ClientOptions{}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}
	base := strings.TrimRight(address, "/")
	switch {
	case strings.HasPrefix(address, "unix://"):
		socket := strings.TrimPrefix(address, "unix://")
		transport.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		}
		base = "http://semroute"
	case strings.HasPrefix(address, "http://"):
	default:
		return nil, &Error{Code: CodeInvalidArgument, Message: "address must be http://host:port or unix:///path: " + address}
	}
	return &Client{base: base, http: &http.Client{Transport: transport, Timeout: timeout}, token: opts.Token}, nil
}

// Model is the served model named name (the serve config's models.<name>).
func (c *Client) Model(name string) *RemoteModel { return &RemoteModel{c: c, name: name} }

// Unified is the served unified classifier named name.
func (c *Client) Unified(name string) *RemoteUnified { return &RemoteUnified{c: c, name: name} }

// Router is the served router named name ("" when the sidecar serves one).
func (c *Client) Router(name string) *RemoteRouter { return &RemoteRouter{c: c, name: name} }

// Detector is the served hallucination detector named name (detectors.<name>).
func (c *Client) Detector(name string) *RemoteDetector { return &RemoteDetector{c: c, name: name} }

// Ready reports whether the sidecar has loaded everything (GET /ready).
func (c *Client) Ready(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/ready", nil, &struct{}{}, nil)
}

// call sends body (JSON-encoded unless raw bytes) with the extra request
// headers and decodes the answer into out (a *[]byte receives it raw).
func (c *Client) call(ctx context.Context, method, path string, body any, out any, headers map[string]string) error {
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		reader = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return &Error{Code: CodeInvalidArgument, Message: err.Error()}
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, reader)
	if err != nil {
		return &Error{Code: CodeInvalidArgument, Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for name, value := range headers {
		req.Header.Set(name, value)
	}
	if deadline, ok := ctx.Deadline(); ok { // the sidecar gives up when the caller would
		ms := time.Until(deadline).Milliseconds()
		if ms < 1 {
			ms = 1
		} else if ms > maxTimeoutMS {
			ms = maxTimeoutMS
		}
		req.Header.Set("x-semroute-timeout-ms", strconv.FormatInt(ms, 10))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("semroute sidecar: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("semroute sidecar: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return serverError(resp.StatusCode, data)
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return nil
	}
	return json.Unmarshal(data, out)
}

// serverError turns {"error": {"code", "message"}} into an *Error with the
// stable code (errors.Is(err, ErrInvalidUTF8) works as in process).
func serverError(status int, body []byte) error {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	if status == http.StatusTooManyRequests {
		return fmt.Errorf("%w: %s", ErrBusy, e.Error.Message)
	}
	if status == http.StatusGatewayTimeout {
		return fmt.Errorf("semroute sidecar: %w: %s", context.DeadlineExceeded, e.Error.Message)
	}
	for code, name := range codeNames {
		if name == e.Error.Code {
			return &Error{Code: code, Message: e.Error.Message}
		}
	}
	if code, ok := contractCodes[e.Error.Code]; ok {
		return &Error{Code: code, Message: e.Error.Message}
	}
	return &Error{Code: CodeInternal, Message: fmt.Sprintf("HTTP %d %s: %s", status, e.Error.Code, e.Error.Message)}
}

// The model runtime contract's request errors (its /v1/classify and
// /v1/embeddings), as the C API's codes.
var contractCodes = map[string]Code{
	"invalid_request":     CodeInvalidArgument,
	"model_not_found":     CodeNotFound,
	"request_too_large":   CodeTooLong,
	"unsupported_surface": CodeUnsupported,
	"internal_error":      CodeInternal,
}

// itemError is an item error of the runtime contract ("max_length_exceeded",
// …) for text i, as the error the in-process call would return.
func itemError(i int, name string) error {
	switch name {
	case "deadline_exceeded":
		return fmt.Errorf("semroute sidecar: text %d: %w", i, context.DeadlineExceeded)
	case "max_length_exceeded", "scan_budget_exceeded":
		return &Error{Code: CodeTooLong, Message: fmt.Sprintf("text %d: %s", i, name)}
	case "invalid_input":
		return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("text %d: %s", i, name)}
	}
	return &Error{Code: CodeInternal, Message: fmt.Sprintf("text %d: %s", i, name)}
}

// RemoteModel is a model served by the sidecar.
type RemoteModel struct {
	c    *Client
	name string
}

type wireInput struct {
	InputTokens     int  `json:"input_tokens"`
	ProcessedTokens int  `json:"processed_tokens"`
	Truncated       bool `json:"truncated"`
}

func (w wireInput) usage() InputUsage { return InputUsage(w) }

// contractInput is the runtime contract's InputUsage: a cut input's token
// count is a lower bound, which InputUsage reports as 0 (not counted to its end).
type contractInput struct {
	Tokens          int  `json:"tokens"`
	ProcessedTokens int  `json:"processed_tokens"`
	Truncated       bool `json:"truncated"`
	LowerBound      bool `json:"tokens_lower_bound"`
}

func (c contractInput) usage() InputUsage {
	u := InputUsage{InputTokens: c.Tokens, ProcessedTokens: c.ProcessedTokens, Truncated: c.Truncated}
	if c.LowerBound {
		u.InputTokens = 0
	}
	return u
}

// contract posts texts to a runtime contract surface, cut to the model's
// limit as in process (options.overflow "truncate"), with the context's
// deadline as options.deadline_ms.
func (m *RemoteModel) contract(ctx context.Context, path string, texts []string, out any) error {
	if err := checkUTF8(texts); err != nil {
		return err
	}
	options := map[string]any{"overflow": "truncate"}
	if deadline, ok := ctx.Deadline(); ok { // as the router sends it: the time left, to the microsecond
		options["deadline_ms"] = math.Max(float64(time.Until(deadline).Microseconds())/1000, 0.001)
	}
	body := map[string]any{"model": m.name, "input": texts, "options": options}
	return m.c.call(ctx, http.MethodPost, path, body, out, nil)
}

type wireEntity struct {
	Type  string  `json:"type"`
	Begin int     `json:"begin"`
	End   int     `json:"end"`
	Text  string  `json:"text"`
	Score float32 `json:"score"`
}

func (w wireEntity) entity() Entity { return Entity(w) }

// checkUTF8 refuses invalid UTF-8 here, as in process (JSON would carry it as U+FFFD).
func checkUTF8(texts []string) error {
	for i, text := range texts {
		if !utf8.ValidString(text) {
			return &Error{Code: CodeInvalidUTF8, Message: fmt.Sprintf("text %d is not valid UTF-8", i)}
		}
	}
	return nil
}

// texts posts {"model", "input": texts}; invalid UTF-8 is refused here, as
// in process (JSON would carry it as U+FFFD).
func (m *RemoteModel) texts(ctx context.Context, path string, texts []string, out any) error {
	if err := checkUTF8(texts); err != nil {
		return err
	}
	return m.c.call(ctx, http.MethodPost, path, map[string]any{"model": m.name, "input": texts}, out, nil)
}

// Classify labels one text.
func (m *RemoteModel) Classify(text string) (Classification, error) {
	r, err := m.ClassifyBatch(context.Background(), []string{text})
	if err != nil {
		return Classification{}, err
	}
	return r[0], nil
}

// ClassifyBatch labels texts in one request.
func (m *RemoteModel) ClassifyBatch(ctx context.Context, texts []string) ([]Classification, error) {
	var out struct {
		Kind    string   `json:"kind"`
		Labels  []string `json:"labels"`
		Results []struct {
			Label         string        `json:"label"`
			Probabilities []float32     `json:"probabilities"`
			Scores        []float32     `json:"scores"` // a multi-label head's, as in process
			Input         contractInput `json:"input"`
			Error         string        `json:"error"`
		} `json:"results"`
	}
	if err := m.contract(ctx, "/v1/classify", texts, &out); err != nil {
		return nil, err
	}
	if out.Kind != "sequence" && out.Kind != "scores" {
		return nil, &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("model %q is not a sequence classifier (%s)", m.name, out.Kind)}
	}
	if len(out.Results) != len(texts) {
		return nil, &Error{Code: CodeInternal, Message: "the sidecar answered another number of results"}
	}
	results := make([]Classification, len(out.Results))
	for i, r := range out.Results {
		if r.Error != "" {
			return nil, itemError(i, r.Error)
		}
		if out.Kind == "scores" {
			r.Probabilities = r.Scores
		}
		if len(r.Probabilities) == 0 {
			return nil, &Error{Code: CodeInternal, Message: "the sidecar answered no probabilities"}
		}
		if len(r.Probabilities) != len(out.Labels) {
			return nil, &Error{Code: CodeInternal, Message: "the sidecar answered probabilities for other labels"}
		}
		best := 0 // the first of equal maxima, as in process
		for k, p := range r.Probabilities {
			if p > r.Probabilities[best] {
				best = k
			}
		}
		results[i] = Classification{ClassID: best, Label: out.Labels[best], Confidence: r.Probabilities[best],
			Probabilities: r.Probabilities, Input: r.Input.usage()}
	}
	return results, nil
}

// ClassifyTokens finds the entities of one text.
func (m *RemoteModel) ClassifyTokens(text string) (TokenResult, error) {
	r, err := m.ClassifyTokensBatch(context.Background(), []string{text})
	if err != nil {
		return TokenResult{}, err
	}
	return r[0], nil
}

// ClassifyTokensBatch finds the entities of texts in one request.
func (m *RemoteModel) ClassifyTokensBatch(ctx context.Context, texts []string) ([]TokenResult, error) {
	var out struct {
		Labels  []string `json:"labels"`
		Results []struct {
			Entities []wireEntity `json:"entities"`
			Tokens   []struct {
				ID          int     `json:"id"`
				Label       string  `json:"label"`
				Begin       int     `json:"begin"`
				End         int     `json:"end"`
				Probability float32 `json:"probability"`
			} `json:"tokens"`
			Input wireInput `json:"input"`
		} `json:"results"`
	}
	if err := m.texts(ctx, "/v1/tokens", texts, &out); err != nil {
		return nil, err
	}
	labelID := map[string]int{}
	for i, l := range out.Labels {
		labelID[l] = i
	}
	results := make([]TokenResult, len(out.Results))
	for i, r := range out.Results {
		res := TokenResult{Input: r.Input.usage(), Entities: []Entity{}}
		for _, e := range r.Entities {
			res.Entities = append(res.Entities, e.entity())
		}
		for _, t := range r.Tokens {
			res.Tokens = append(res.Tokens, TokenLabel{TokenID: t.ID, LabelID: labelID[t.Label], Label: t.Label,
				Begin: t.Begin, End: t.End, Probability: t.Probability})
		}
		results[i] = res
	}
	return results, nil
}

// Embed embeds one text.
func (m *RemoteModel) Embed(text string) ([]float32, error) {
	r, err := m.EmbedBatch(context.Background(), []string{text})
	if err != nil {
		return nil, err
	}
	return r[0], nil
}

// EmbedBatch embeds texts in one request (the OpenAI embeddings API).
func (m *RemoteModel) EmbedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
			Error     string    `json:"error"`
		} `json:"data"`
	}
	if err := m.contract(ctx, "/v1/embeddings", texts, &out); err != nil {
		return nil, err
	}
	vectors := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(vectors) {
			return nil, &Error{Code: CodeInternal, Message: "the sidecar answered an index out of range"}
		}
		if d.Error != "" {
			return nil, itemError(d.Index, d.Error)
		}
		vectors[d.Index] = d.Embedding
	}
	return vectors, nil
}

// Similarity is the cosine similarity of two texts' embeddings.
func (m *RemoteModel) Similarity(a, b string) (float32, error) {
	if !utf8.ValidString(a) || !utf8.ValidString(b) {
		return 0, &Error{Code: CodeInvalidUTF8, Message: "a text is not valid UTF-8"}
	}
	var out struct {
		Similarity float32 `json:"similarity"`
	}
	err := m.c.call(context.Background(), http.MethodPost, "/v1/similarity",
		map[string]any{"model": m.name, "a": a, "b": b}, &out, nil)
	return out.Similarity, err
}

// RemoteUnified is a unified classifier served by the sidecar.
type RemoteUnified struct {
	c    *Client
	name string
}

// Classify answers the requested tasks (req may be nil: every task) for each text.
func (u *RemoteUnified) Classify(ctx context.Context, texts []string, req *UnifiedRequest) ([][]TaskAnswer, error) {
	body := map[string]any{"model": u.name, "input": texts}
	if req != nil {
		if len(req.Tasks) > 0 {
			body["tasks"] = req.Tasks
		}
		body["prefer_accuracy"] = req.PreferAccuracy
	}
	var out struct {
		Results []struct {
			Tasks []struct {
				Task          string             `json:"task"`
				Path          string             `json:"path"`
				Reason        string             `json:"reason"`
				LatencyMS     float64            `json:"latency_ms"`
				Error         string             `json:"error"`
				ErrorCode     string             `json:"error_code"`
				Label         *string            `json:"label"`
				Confidence    float32            `json:"confidence"`
				Probabilities map[string]float32 `json:"probabilities"`
				Risk          float32            `json:"risk"`
				Flagged       bool               `json:"flagged"`
				Entities      []wireEntity       `json:"entities"`
			} `json:"tasks"`
		} `json:"results"`
	}
	if err := u.c.call(ctx, http.MethodPost, "/v1/unified", body, &out, nil); err != nil {
		return nil, err
	}
	answers := make([][]TaskAnswer, len(out.Results))
	for i, r := range out.Results {
		for _, t := range r.Tasks {
			a := TaskAnswer{Task: t.Task, Reason: t.Reason, LatencyMS: t.LatencyMS, Error: t.Error, Risk: t.Risk,
				Flagged: t.Flagged}
			if t.Path == "lora" {
				a.Path = PathLoRA
			}
			for code, name := range codeNames {
				if t.Error != "" && name == t.ErrorCode {
					a.ErrorCode = code
				}
			}
			if t.Label != nil {
				a.Kind = TaskSequenceClassification
				a.Classification = Classification{Label: *t.Label, Confidence: t.Confidence}
			} else if t.Entities != nil {
				a.Kind = TaskTokenClassification
				for _, e := range t.Entities {
					a.Entities = append(a.Entities, e.entity())
				}
			}
			answers[i] = append(answers[i], a)
		}
	}
	return answers, nil
}

// RemoteRouter is a router served by the sidecar.
type RemoteRouter struct {
	c    *Client
	name string
}

func (r *RemoteRouter) query() string {
	if r.name == "" {
		return ""
	}
	return "?router=" + r.name
}

// Route routes one chat request (its JSON body). Metadata travels in the
// x-semroute-metadata header as a JSON object.
func (r *RemoteRouter) Route(request []byte, metadata map[string]string) (*Route, error) {
	if len(request) == 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "an empty request"}
	}
	var out struct {
		Decision    string            `json:"decision"`
		Confidence  float64           `json:"confidence"`
		Model       string            `json:"model"`
		Blocked     bool              `json:"blocked"`
		Cache       string            `json:"cache"`
		Request     json.RawMessage   `json:"request"`
		Response    json.RawMessage   `json:"response"`
		Headers     map[string]string `json:"headers"`
		RouteID     string            `json:"route_id"`
		CheckAnswer bool              `json:"check_answer"`
	}
	var headers map[string]string
	if metadata != nil {
		meta, err := json.Marshal(metadata)
		if err != nil {
			return nil, &Error{Code: CodeInvalidArgument, Message: "metadata: " + err.Error()}
		}
		headers = map[string]string{"x-semroute-metadata": string(meta)}
	}
	var raw json.RawMessage
	if err := r.c.call(context.Background(), http.MethodPost, "/v1/route"+r.query(), request, &raw, headers); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, &Error{Code: CodeInternal, Message: err.Error()}
	}
	route := &Route{Decision: out.Decision, Confidence: out.Confidence, Blocked: out.Blocked, CacheHit: out.Cache == "hit",
		Model: out.Model, Request: out.Request, Headers: out.Headers, JSON: raw, CheckAnswer: out.CheckAnswer}
	if len(out.Response) > 0 && string(out.Response) != "null" {
		route.Response = out.Response
	}
	if route.Headers == nil {
		route.Headers = map[string]string{}
	}
	if out.RouteID != "" {
		route.handle = remoteRoute(out.RouteID)
	}
	return route, nil
}

type remoteRoute string

// StoreAnswer caches the model's answer to a request routed with a cache miss.
func (r *RemoteRouter) StoreAnswer(route *Route, answer []byte) (bool, error) {
	id, ok := route.handle.(remoteRoute)
	if !ok {
		return false, nil
	}
	var out struct {
		Stored bool `json:"stored"`
	}
	err := r.c.call(context.Background(), http.MethodPost, "/v1/route/answer",
		map[string]any{"route_id": string(id), "response": json.RawMessage(answer)}, &out, nil)
	return out.Stored, err
}

// The sidecar's handles answer what the in-process ones do.
var (
	_ SequenceClassifier  = (*RemoteModel)(nil)
	_ TokenClassifier     = (*RemoteModel)(nil)
	_ TextEmbedder        = (*RemoteModel)(nil)
	_ MultiTaskClassifier = (*RemoteUnified)(nil)
	_ RequestRouter       = (*RemoteRouter)(nil)
)

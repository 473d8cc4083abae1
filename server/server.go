// Package server is archc's OpenAI-compatible HTTP API over a continuous
// batching engine (rt/engine): POST /v1/completions and
// /v1/chat/completions (streamed as server-sent events or not), GET
// /v1/models, GET /health, Prometheus GET /metrics, and a chat page at
// GET /. Requests are token-exact: a greedy request returns the tokens it
// would get alone.
package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/archc/archc/formats/option"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/chat"
	"github.com/archc/archc/rt/engine"
)

// Config configures a Server.
type Config struct {
	// Name is the model id /v1/models lists and responses carry.
	Name string
	// APIKey, when set, is required on every /v1/ call and on /tokenize
	// and /detokenize, as "Authorization: Bearer KEY" (the scheme in any
	// case, RFC 7235) or "x-api-key: KEY" (Anthropic's clients); 401
	// otherwise.
	APIKey string
	// MaxBodyBytes bounds a request body (0: 1 MiB).
	MaxBodyBytes int64
	// DefaultMaxTokens is max_tokens for a completion that gives none
	// (0: 16, OpenAI's default). Chat completions default to the rest of
	// the context.
	DefaultMaxTokens int
	// MaxN bounds a request's n (choices per request; 0: 8).
	MaxN int
	// CORSOrigins are the origins browsers may call the API from ("*":
	// any); none turns CORS off (same-origin only).
	CORSOrigins []string
	// Log receives one record per API request (nil: none).
	Log *slog.Logger
	// Images says how requests send images (a vision-language model's);
	// the zero value takes none.
	Images ImageConfig
}

// Server serves the API. It answers 503 until Attach gives it a model.
type Server struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	mux     *http.ServeMux
	handler http.Handler
	stored  responseStore // /v1/responses kept for previous_response_id
	// replay, when a test sets it, is every choice's events: chat
	// requests are planned (without a model) and answered with them
	// instead of the engine's.
	replay []chatEvent

	vocab vocabCache // the grammar engine's vocabulary file (tools.go)

	mu     sync.RWMutex
	model  *rt.Model
	text   *rt.Text
	engine *engine.Engine
}

// routes are the endpoints the server answers and their methods; notFound
// names them.
var routes = []struct{ method, path string }{
	{"GET", "/v1/models"},
	{"GET", "/v1/models/{id}"},
	{"POST", "/v1/completions"},
	{"POST", "/v1/chat/completions"},
	{"POST", "/v1/responses"},
	{"GET", "/v1/responses/{id}"},
	{"POST", "/v1/messages"},
	{"POST", "/v1/messages/count_tokens"},
	{"POST", "/tokenize"},
	{"POST", "/detokenize"},
	{"GET", "/health"},
	{"GET", "/metrics"},
}

// New returns a server that is not ready yet (see Attach).
func New(cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.DefaultMaxTokens <= 0 {
		cfg.DefaultMaxTokens = 16
	}
	if cfg.MaxN <= 0 {
		cfg.MaxN = 8
	}
	s := &Server{cfg: cfg, log: cfg.Log, mux: http.NewServeMux()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.metrics = newMetrics(cfg.Name, s.stats)
	s.mux.HandleFunc("GET /health", s.health)
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.mux.HandleFunc("GET /v1/models", s.api(s.models))
	s.mux.HandleFunc("GET /v1/models/{id}", s.api(s.modelByID))
	s.mux.HandleFunc("POST /v1/completions", s.api(s.completions))
	s.mux.HandleFunc("POST /v1/chat/completions", s.api(s.chatCompletions))
	s.mux.HandleFunc("POST /v1/responses", s.api(s.responses))
	s.mux.HandleFunc("GET /v1/responses/{id}", s.api(s.getResponse))
	s.mux.HandleFunc("POST /v1/messages", s.api(s.messages))
	s.mux.HandleFunc("POST /v1/messages/count_tokens", s.api(s.countTokens))
	s.mux.HandleFunc("POST /tokenize", s.api(s.tokenize))
	s.mux.HandleFunc("POST /detokenize", s.api(s.detokenize))
	pageRoutes(s.mux)
	s.mux.HandleFunc("/", s.notFound)
	s.handler = withCORS(s.mux, cfg.CORSOrigins)
	return s
}

// routeMatches reports whether path matches a route's pattern (a literal
// path, or one ending in the wildcard segment "{id}").
func routeMatches(pattern, path string) bool {
	prefix, ok := strings.CutSuffix(pattern, "{id}")
	if !ok {
		return pattern == path
	}
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// notFound answers the paths no route takes, in OpenAI's error shape: 405
// with Allow for a known endpoint called with another method, 404 naming
// the right path for an endpoint called without its /v1 prefix, else 404.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, rt := range routes {
		if routeMatches(rt.path, r.URL.Path) {
			allow = append(allow, rt.method)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Message: fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")), Type: "invalid_request_error"})
		return
	}
	for _, rt := range routes {
		if strings.HasPrefix(rt.path, "/v1/") && "/v1"+r.URL.Path == rt.path {
			writeError(w, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("no endpoint %s: the path is %s", r.URL.Path, rt.path), Type: "invalid_request_error", Code: "unknown_url"})
			return
		}
	}
	var paths []string
	for _, rt := range routes {
		paths = append(paths, rt.method+" "+rt.path)
	}
	writeError(w, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("no endpoint %s %s (archc serves %s)", r.Method, r.URL.Path, strings.Join(paths, ", ")), Type: "invalid_request_error", Code: "unknown_url"})
}

// Attach makes the server ready: m is loaded, text is its tokenizer and
// chat template, e schedules requests on m (e.Run must be running).
func (s *Server) Attach(m *rt.Model, text *rt.Text, e *engine.Engine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model, s.text, s.engine = m, text, e
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) ready() (*rt.Model, *rt.Text, *engine.Engine, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.engine == nil {
		return nil, nil, nil, &apiError{Status: http.StatusServiceUnavailable, Message: "the model is still loading", Type: "server_error"}
	}
	return s.model, s.text, s.engine, nil
}

func (s *Server) stats() (engine.Stats, bool) {
	_, _, e, err := s.ready()
	if err != nil {
		return engine.Stats{}, false
	}
	return e.Stats(), true
}

// health answers 200 {"status": "ok"} when requests can be served, else
// 503 (healthStatus).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	st, ok := s.stats()
	code, body := healthStatus(st, ok)
	writeStatus(w, code, body)
}

// healthStatus is /health's answer for the engine's state (ok: a model is
// attached): 503 with status "loading" (no model yet), "restarting" (the
// worker is being restarted after a failure) or "down" (its restart
// failed; error says why), else 200 "ok".
func healthStatus(st engine.Stats, ok bool) (int, map[string]any) {
	switch {
	case !ok:
		return http.StatusServiceUnavailable, map[string]any{"status": "loading"}
	case st.WorkerDown != nil:
		return http.StatusServiceUnavailable, map[string]any{"status": "down", "error": st.WorkerDown.Error()}
	case st.Restarting:
		return http.StatusServiceUnavailable, map[string]any{"status": "restarting"}
	}
	return http.StatusOK, map[string]any{"status": "ok"}
}

func writeStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status, r.wrote = code, true
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) error {
	m, _, _, err := s.ready()
	if err != nil {
		return err
	}
	writeJSON(w, map[string]any{"object": "list", "data": []any{s.modelObject(m)}})
	return nil
}

// modelByID is GET /v1/models/{id}: the model if id is its name, else 404.
func (s *Server) modelByID(w http.ResponseWriter, r *http.Request) error {
	m, _, _, err := s.ready()
	if err != nil {
		return err
	}
	if id := r.PathValue("id"); id != s.cfg.Name {
		return &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("the model %q does not exist: this server serves %q", id, s.cfg.Name), Type: "invalid_request_error", Param: "model", Code: "model_not_found"}
	}
	writeJSON(w, s.modelObject(m))
	return nil
}

// modelObject is OpenAI's model object plus max_model_len (vLLM's name
// for the context length).
func (s *Server) modelObject(m *rt.Model) map[string]any {
	return map[string]any{"id": s.cfg.Name, "object": "model", "created": 0, "owned_by": "archc", "max_model_len": m.MaxLen()}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// options turns the shared sampling fields into an engine request (all but
// the prompt) and the stop strings. Defaults as OpenAI: temperature 1,
// top_p 1; a request without a seed gets a random one.
func (s *Server) options(m *rt.Model, text *rt.Text, p sampling, promptLen, defaultMax int) (engine.Request, []string, error) {
	return s.optionsNamed(m, text, p, promptLen, defaultMax, chatNames)
}

// optionsNamed is options with errors naming the caller's fields (names:
// max_tokens and stop). The request's n is runChat's, not the engine's.
func (s *Server) optionsNamed(m *rt.Model, text *rt.Text, p sampling, promptLen, defaultMax int, names *fieldNames) (engine.Request, []string, error) {
	var req engine.Request
	// max_completion_tokens, OpenAI's newer name, wins over max_tokens
	// when both are given (as in OpenAI's and vLLM's servers).
	max, field := defaultMax, names.maxTokens
	if p.MaxTokens != nil {
		max = *p.MaxTokens
	}
	if p.MaxCompletionTokens != nil {
		max, field = *p.MaxCompletionTokens, "max_completion_tokens"
	}
	room := m.MaxLen() + 1 - promptLen
	if promptLen > m.MaxLen() {
		return req, nil, badRequest("prompt", "the prompt has %d tokens; the context holds %d", promptLen, m.MaxLen())
	}
	if max < 1 {
		return req, nil, badRequest(field, "%s must be at least 1, got %d", field, max)
	}
	if max > room {
		given := fmt.Sprint(max)
		if p.MaxTokens == nil && p.MaxCompletionTokens == nil {
			given = fmt.Sprintf("the default %d: send a smaller one", max)
		}
		return req, nil, badRequest(field, "the prompt (%s) plus %s (%s) exceed the context length of %d tokens", option.Count(promptLen, "token", "tokens"), field, given, m.MaxLen())
	}
	req.MaxTokens = max
	if err := p.StreamOptions.check(p.Stream); err != nil {
		return req, nil, err
	}
	if p.Speculative != nil {
		if *p.Speculative && len(m.Program.VerifyBuckets) == 0 {
			return req, nil, badRequest("speculative", "this server does not speculate; start infer serve with --speculative ngram, draft:PATH or mtp, or leave the field out")
		}
		req.NoSpeculation = !*p.Speculative
	}
	o := rt.SamplingOptions{Temperature: 1}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setF(&o.Temperature, p.Temperature)
	setF(&o.TopP, p.TopP)
	setF(&o.MinP, p.MinP)
	setF(&o.RepetitionPenalty, p.RepetitionPenalty)
	setF(&o.FrequencyPenalty, p.FrequencyPenalty)
	setF(&o.PresencePenalty, p.PresencePenalty)
	setF(&o.DRY.Multiplier, p.DRYMultiplier)
	setF(&o.DRY.Base, p.DRYBase)
	if p.TopK != nil {
		o.TopK = *p.TopK
	}
	// An explicit 0 is a value, not "the default": repetition_penalty 0
	// is refused (as transformers and vLLM do), dry_base 0 too (rt reads
	// Base 0 as its default), dry_allowed_length 0 penalizes every repeat.
	if v := p.RepetitionPenalty; v != nil && !(*v > 0) {
		return req, nil, badRequest("repetition_penalty", "repetition_penalty %g must be > 0 (1: off; above 1 penalizes repeats)", *v)
	}
	if v := p.DRYBase; v != nil && !(*v >= 1) {
		return req, nil, badRequest("dry_base", "dry_base %g must be >= 1 (1: a flat penalty; llama.cpp turns DRY off below 1: for that, set dry_multiplier 0)", *v)
	}
	o.DRY.AllowedLength = p.DRYAllowedLength
	if p.DRYPenaltyLastN != nil {
		o.DRY.Range = *p.DRYPenaltyLastN
	}
	breakers := p.DRYSequenceBreakers
	if breakers == nil {
		breakers = rt.DefaultDRYBreakers()
	}
	if o.DRY.Multiplier != 0 && text != nil {
		for _, b := range breakers {
			ids, err := text.Tokenizer.Encode(b, false)
			if err != nil {
				return req, nil, badRequest("dry_sequence_breakers", "%v", err)
			}
			o.DRY.Breakers = append(o.DRY.Breakers, ids...)
		}
	}
	if p.Seed != nil {
		o.Seed = uint64(*p.Seed)
	} else {
		o.Seed = randomSeed()
	}
	switch {
	case o.TopP == 1:
		o.TopP = 0
	case p.TopP != nil && *p.TopP == 0:
		// top_p 0 keeps the most likely token only (llama.cpp keeps its
		// min_keep of 1; transformers its min_tokens_to_keep): top-k 1.
		if o.TopK == 0 || o.TopK > 1 {
			o.TopK = 1
		}
	}
	if err := o.Validate(); err != nil {
		param := ""
		var bad *rt.InvalidOption
		if errors.As(err, &bad) {
			param = bad.Option
		}
		return req, nil, badRequest(param, "%v", err)
	}
	req.Sampling = o
	for _, id := range p.StopTokenIDs {
		if id < 0 || int64(id) >= m.Vocab {
			return req, nil, badRequest("stop_token_ids", "token id %d is outside the vocabulary [0, %d)", id, m.Vocab)
		}
	}
	req.StopTokens = p.StopTokenIDs
	if len(p.Stop) > 4 {
		return req, nil, badRequest(names.stop, "at most 4 stop strings, got %d", len(p.Stop))
	}
	for _, st := range p.Stop {
		if st == "" {
			return req, nil, badRequest(names.stop, "%s: an empty stop string would end every answer at once; leave it out", names.stop)
		}
	}
	if len(p.Stop) > 0 && text == nil {
		return req, nil, badRequest(names.stop, "stop strings need the model's tokenizer")
	}
	return req, p.Stop, nil
}

// queueError is the API error for the engine refusing to queue a request
// (full: 429; stopped: 503), or nil for any other error.
func queueError(err error) error {
	switch {
	case errors.Is(err, engine.ErrQueueFull):
		return &apiError{Status: http.StatusTooManyRequests, Message: err.Error(), Type: "server_error", Code: "rate_limit_exceeded"}
	case errors.Is(err, engine.ErrClosed):
		return &apiError{Status: http.StatusServiceUnavailable, Message: "the server is shutting down", Type: "server_error"}
	}
	return nil
}

// tokenLogprob is one generated token with its logprob and alternatives.
type tokenLogprob struct {
	Token string
	Bytes []byte
	Prob  float32
	Top   []tokenAlt
}

type tokenAlt struct {
	Token string
	Bytes []byte
	Prob  float32
}

// result is a finished generation.
type result struct {
	Text             string
	TokenIDs         []int32 // every generated id, end tokens included
	Finish           string
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
	Logprobs         []tokenLogprob
}

// run submits req and streams its text: each piece that is safe to send
// (end tokens are not text; stop strings are held back and never sent)
// goes to onText with the ids and logprobs of the tokens generated since
// the previous call (end tokens included, with no text). The request ends early when ctx ends (a closed
// connection). Errors: the engine refusing the request (queue full: 429),
// a model failure.
func (s *Server) run(ctx context.Context, m *rt.Model, text *rt.Text, e *engine.Engine, req engine.Request, stops []string, onText func(piece string, ids []int32, lps []tokenLogprob) error) (*result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	if st := e.Stats(); st.WorkerDown != nil {
		return nil, &apiError{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf("the model's worker is down: %v", st.WorkerDown), Type: "server_error"}
	}
	events, err := e.Submit(ctx, req)
	if err != nil {
		if err := queueError(err); err != nil {
			return nil, err
		}
		return nil, badRequest("", "%v", err)
	}
	res := &result{}
	var ttft time.Duration
	defer func() {
		if res.Finish != "" {
			s.metrics.finished.WithLabelValues(res.Finish).Inc()
			info(ctx).add(res, ttft)
		}
	}()
	stop := &rt.StopStrings{Stops: stops}
	var stream interface {
		Add(int32) string
		Flush() string
	}
	if text != nil {
		stream = text.Tokenizer.NewStream()
	}
	end := append(slices.Clone(m.EOS), req.StopTokens...)
	var pendingLP []tokenLogprob
	var pendingIDs []int32
	last := start
	first := true
	for {
		var ev engine.Event
		select {
		case ev = <-events:
		case <-ctx.Done():
			// A closed connection (or a found stop string, below): the
			// engine frees the slot on its own; nothing more is sent.
			ev = engine.Event{Done: true, FinishReason: engine.FinishCancelled}
			if stop.Stopped() {
				ev.FinishReason = engine.FinishStop
			}
			ev.PromptTokens, ev.CompletionTokens = len(req.Prompt), len(res.TokenIDs)
		}
		if ev.Done {
			res.Finish, res.PromptTokens, res.CompletionTokens, res.CachedTokens = ev.FinishReason, ev.PromptTokens, ev.CompletionTokens, ev.CachedTokens
			s.metrics.addPrompt(ev.PromptTokens)
			if err := queueError(ev.Err); err != nil { // the group of n choices could not be queued
				return nil, err
			}
			if ev.Err != nil {
				return res, fmt.Errorf("generation failed: %w", ev.Err)
			}
			break
		}
		now := time.Now()
		if first {
			ttft = now.Sub(start)
			s.metrics.observeTTFT(ttft.Seconds())
			first = false
		} else {
			s.metrics.itl.Observe(now.Sub(last).Seconds())
		}
		last = now
		s.metrics.addGenerated()
		res.TokenIDs = append(res.TokenIDs, ev.Token)
		pendingIDs = append(pendingIDs, ev.Token)
		if req.Sampling.Logprobs || req.Sampling.TopLogprobs > 0 {
			pendingLP = append(pendingLP, s.logprob(text, ev))
		}
		if stop.Stopped() || slices.Contains(end, ev.Token) {
			continue
		}
		piece := ""
		if stream != nil {
			piece = stream.Add(ev.Token)
		}
		out, stopped := stop.Push(piece)
		res.Text += out
		if err := onText(out, pendingIDs, pendingLP); err != nil {
			return res, err
		}
		res.Logprobs = append(res.Logprobs, pendingLP...)
		pendingLP, pendingIDs = nil, nil
		if stopped {
			cancel() // ends the request in the engine; its Done event follows
		}
	}
	if stop.Stopped() {
		res.Finish = engine.FinishStop
	}
	tail := ""
	if stream != nil && !stop.Stopped() {
		tail, _ = stop.Push(stream.Flush())
	}
	tail += stop.Flush()
	res.Text += tail
	if tail != "" || len(pendingIDs) > 0 {
		if err := onText(tail, pendingIDs, pendingLP); err != nil {
			return res, err
		}
		res.Logprobs = append(res.Logprobs, pendingLP...)
	}
	return res, nil
}

// logprob describes a generated token for the logprobs fields.
func (s *Server) logprob(text *rt.Text, ev engine.Event) tokenLogprob {
	tok := func(id int32) (string, []byte) {
		if text == nil {
			return fmt.Sprint(id), nil
		}
		// The text is the token decoded alone (U+FFFD for a part of a
		// multi-byte character); the bytes are the token's own.
		return text.Tokenizer.Decode([]int32{id}), text.Tokenizer.TokenBytes(id)
	}
	t, b := tok(ev.Token)
	lp := tokenLogprob{Token: t, Bytes: b, Prob: ev.Logprob}
	for i, id := range ev.TopIDs {
		at, ab := tok(id)
		lp.Top = append(lp.Top, tokenAlt{Token: at, Bytes: ab, Prob: ev.TopLogprobs[i]})
	}
	return lp
}

// chatPrompt renders messages with the model's chat template.
func chatPrompt(text *rt.Text, msgs []message) ([]int32, error) {
	if text == nil || text.ChatTemplate == "" {
		return nil, badRequest("messages", "the model has no chat template: start the server with --chat-template FILE, or use /v1/completions")
	}
	if len(msgs) == 0 {
		return nil, badRequest("messages", "messages must not be empty")
	}
	turns := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant", "developer":
		default:
			return nil, badRequest("messages", "message %d: role %q is not system, user or assistant", i, m.Role)
		}
		c, err := m.text(i)
		if err != nil {
			return nil, err
		}
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		turns[i] = chat.Message{Role: role, Content: c}
	}
	ids, err := text.EncodeChat(turns)
	if err != nil {
		return nil, badRequest("messages", "%v", err)
	}
	return ids, nil
}

// newID returns a response id with prefix ("cmpl-", "chatcmpl-").
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + strings.ToLower(fmt.Sprintf("%x", b))
}

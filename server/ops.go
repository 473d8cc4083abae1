package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/cors"
)

// reqInfo is what a request's generations report for its log line; run
// fills it (once per choice with n > 1).
type reqInfo struct {
	mu                          sync.Mutex
	prompt, generated, cached   int
	ttft                        time.Duration // to the first token of the first choice
	finish                      []string      // one per choice
	refusedField, ignoredFields string
	// unparsedCalls: tools were given to a template whose tool-call
	// convention archc does not parse (toolcall.Unrecognized), so calls
	// are returned as content.
	unparsedCalls bool
	// n is the request's number of choices (nChoices; 0 is 1).
	n int
}

// choices is the request's number of choices.
func (ri *reqInfo) choices() int { return max(ri.n, 1) }

type reqInfoKey struct{}

// info returns the request's reqInfo, or a throwaway one outside api.
func info(ctx context.Context) *reqInfo {
	if ri, ok := ctx.Value(reqInfoKey{}).(*reqInfo); ok {
		return ri
	}
	return &reqInfo{}
}

// add records one finished generation of the request.
func (ri *reqInfo) add(res *result, ttft time.Duration) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if ri.prompt == 0 {
		ri.prompt, ri.cached = res.PromptTokens, res.CachedTokens
	}
	ri.generated += res.CompletionTokens
	if ttft > 0 && (ri.ttft == 0 || ttft < ri.ttft) {
		ri.ttft = ttft
	}
	ri.finish = append(ri.finish, res.Finish)
}

// api wraps an API handler: it sets the request id (X-Request-Id, the
// client's if it sent a short printable one), checks the API key, reads
// the body (413 beyond Config.MaxBodyBytes, 400 for invalid UTF-8 naming
// the field, 400 for a refused field, see fields.go), counts the answer by
// endpoint and status, and logs one line per request: id, endpoint, status,
// prompt, cached and generated tokens, time to first token, duration and
// finish reasons.
func (s *Server) api(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r)
		w.Header().Set("X-Request-Id", id)
		endpoint := r.URL.Path
		if _, p, ok := strings.Cut(r.Pattern, " "); ok {
			endpoint = p
		}
		ri := &reqInfo{}
		r = r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, ri))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		var err error
		var top map[string]json.RawMessage
		switch {
		case !s.authorized(r):
			err = &apiError{Status: http.StatusUnauthorized, Message: "missing or wrong API key: send Authorization: Bearer KEY", Type: "invalid_request_error", Code: "invalid_api_key"}
		case r.Method == http.MethodPost:
			top, err = s.checkBody(r, endpoint, ri)
		}
		n := 1
		if err == nil && top != nil && (endpoint == "/v1/completions" || endpoint == "/v1/chat/completions") {
			n, err = nChoices(top, s.cfg.MaxN)
		}
		ri.n = n
		if err == nil {
			err = h(rec, r)
		}
		midStream := err != nil && rec.wrote // a stream already started; its end says what happened
		// A client that hung up: before its answer was written, nginx's
		// 499 (client closed request), logged as info and counted apart
		// from the server's 5xx; nothing is written, no one reads it. Mid
		// stream (the handler's write failed: a broken pipe), its status
		// stands, and it is logged as info too, never as a server error.
		hungUp := err != nil && r.Context().Err() != nil
		gone := hungUp && !rec.wrote
		if gone {
			rec.status = statusClientClosed
		}
		if err != nil && !rec.wrote && !gone {
			if strings.HasPrefix(endpoint, "/v1/messages") {
				anthropicError(rec, err)
			} else {
				writeError(rec, err)
			}
		}
		s.metrics.requests.WithLabelValues(endpoint, fmt.Sprint(rec.status)).Inc()
		ri.mu.Lock()
		defer ri.mu.Unlock()
		attrs := []any{"id", id, "method", r.Method, "endpoint", endpoint, "status", rec.status,
			"duration_ms", time.Since(start).Milliseconds()}
		if len(ri.finish) > 0 {
			attrs = append(attrs, "prompt_tokens", ri.prompt, "cached_tokens", ri.cached, "generated_tokens", ri.generated,
				"ttft_ms", ri.ttft.Milliseconds(), "finish", strings.Join(ri.finish, ","))
		}
		if ri.ignoredFields != "" {
			attrs = append(attrs, "ignored_fields", ri.ignoredFields)
		}
		if ri.unparsedCalls {
			attrs = append(attrs, "tool_calls", "unrecognized convention: the template rendered the tools; calls are returned as content")
		}
		if err != nil {
			attrs = append(attrs, "error", err.Error())
		}
		switch {
		case hungUp:
			s.log.Info("request: the client closed the connection", attrs...)
		case rec.status >= 500 || midStream:
			s.log.Error("request", attrs...)
		case rec.status >= 400:
			s.log.Warn("request", attrs...)
		default:
			s.log.Info("request", attrs...)
		}
	}
}

// statusClientClosed is the status a request's log line and metrics
// record when its client hung up before the answer (nginx's 499).
const statusClientClosed = 499

// requestID returns the client's X-Request-Id when it is 1 to 64
// printable ASCII characters, else a new one.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 {
		ok := true
		for _, c := range []byte(id) {
			ok = ok && c > ' ' && c < 0x7f
		}
		if ok {
			return id
		}
	}
	return newID("req-")
}

// authorized checks the API key: "Authorization: Bearer KEY" with the
// scheme in any case and any spaces before the key (RFC 7235's
// credentials), or "x-api-key: KEY" as Anthropic's clients send it.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	key := []byte(s.cfg.APIKey)
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return subtle.ConstantTimeCompare([]byte(k), key) == 1
	}
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimLeft(cred, " ")), key) == 1
}

// checkBody reads the request body, refuses what no handler should see
// (too large, invalid UTF-8, a refused field) and puts the bytes back for
// the handler. It returns the body's top-level fields (nil when it is not
// a JSON object: the handler's decoder says what is wrong).
func (s *Server) checkBody(r *http.Request, endpoint string, ri *reqInfo) (map[string]json.RawMessage, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, &apiError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("the request body exceeds %d bytes", s.cfg.MaxBodyBytes), Type: "invalid_request_error"}
		}
		return nil, badRequest("", "reading the request body: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !utf8.Valid(body) {
		field, at := invalidUTF8Field(body)
		if field == "" {
			return nil, badRequest("", "the request body is not valid UTF-8 (at byte %d)", at)
		}
		return nil, badRequest(field, "%s: the text is not valid UTF-8 (at byte %d of the body)", field, at)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, nil
	}
	ignored, err := checkFields(endpoint, top)
	ri.ignoredFields = strings.Join(ignored, ",")
	return top, err
}

// invalidUTF8Field returns the JSON path (messages[1].content) of the
// string holding the body's first invalid UTF-8 byte, and that byte's
// offset; the path is "" when the byte is outside any string.
func invalidUTF8Field(body []byte) (string, int) {
	bad := 0
	for bad < len(body) {
		c, n := utf8.DecodeRune(body[bad:])
		if c == utf8.RuneError && n <= 1 {
			break
		}
		bad += n
	}
	return jsonPathAt(body, bad), bad
}

// jsonPathAt returns the path (messages[1].content) of the JSON value of
// body that holds byte bad: the innermost key or element whose token
// covers it ("" outside any, or for bytes the decoder cannot reach).
func jsonPathAt(body []byte, bad int) string {
	// A frame is an open object (its current key) or array (its current
	// index).
	type frame struct {
		obj     bool
		key     string
		idx     int
		wantKey bool
	}
	var st []frame
	path := func() string {
		var b strings.Builder
		for i, f := range st {
			switch {
			case f.obj && i == 0:
				b.WriteString(f.key)
			case f.obj:
				b.WriteString("." + f.key)
			default:
				fmt.Fprintf(&b, "[%d]", f.idx)
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		var top *frame
		if len(st) > 0 {
			top = &st[len(st)-1]
		}
		d, isDelim := tok.(json.Delim)
		closing := isDelim && (d == '}' || d == ']')
		switch {
		case closing:
		case top != nil && top.obj && top.wantKey:
			top.key, top.wantKey = tok.(string), false
		case top != nil && top.obj:
			top.wantKey = true
		case top != nil:
			top.idx++
		}
		if dec.InputOffset() > int64(bad) {
			return path()
		}
		switch {
		case closing:
			st = st[:len(st)-1]
		case isDelim:
			st = append(st, frame{obj: d == '{', idx: -1, wantKey: d == '{'})
		}
	}
}

// withCORS answers browsers' CORS requests from origins (rs/cors: "*" is
// any origin); no origins: h unchanged.
func withCORS(h http.Handler, origins []string) http.Handler {
	if len(origins) == 0 {
		return h
	}
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodOptions},
		AllowedHeaders: []string{"*"},
		ExposedHeaders: []string{"X-Request-Id", "Retry-After"},
		MaxAge:         600,
	}).Handler(h)
}

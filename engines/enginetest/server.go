package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a scripted model server. Its zero value is not usable: make one
// with [New] or [NewServer].
type Server struct {
	// URL is the base URL once started ("http://127.0.0.1:port"), without
	// a trailing slash and without /v1.
	URL string

	logf       func(format string, args ...any)
	classify   func(*Request) string
	models     []string
	allowEmpty bool
	nonce      string
	quit       chan struct{} // closed by Close: wakes hanging handlers

	mu       sync.Mutex // guards the following fields
	steps    []*scripted
	reqs     []*Request
	changed  chan struct{} // closed and replaced on every new request
	ids      int
	record   io.Writer
	hs       *http.Server
	ts       *httptest.Server
	closed   bool
	closeErr error
}

type scripted struct {
	Step
	used int
}

// Option configures a server.
type Option func(*Server)

// WithLogf logs every request and its answer through logf (t.Logf fits).
func WithLogf(logf func(format string, args ...any)) Option {
	return func(s *Server) { s.logf = logf }
}

// WithClassifier replaces [Classify], which tells side requests apart.
func WithClassifier(classify func(*Request) string) Option {
	return func(s *Server) { s.classify = classify }
}

// WithModels sets the models GET …/models lists.
func WithModels(models ...string) Option {
	return func(s *Server) { s.models = models }
}

// AllowExhaustion stops [NewServer] from failing the test when a request
// found no step left.
func AllowExhaustion() Option {
	return func(s *Server) { s.allowEmpty = true }
}

// withRecord appends every request as a JSON line to w.
func withRecord(w io.Writer) Option {
	return func(s *Server) { s.record = w }
}

// New returns a server that answers with sc; it is an http.Handler and can
// be started with [Server.Start].
func New(sc Script, opts ...Option) *Server {
	var nonce [3]byte
	_, _ = rand.Read(nonce[:])
	s := &Server{
		logf:     func(string, ...any) {},
		classify: Classify,
		models:   sc.Models,
		nonce:    hex.EncodeToString(nonce[:]),
		quit:     make(chan struct{}),
		changed:  make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.Script(sc.Steps...)
	return s
}

// NewServer starts a server on a loopback port for the test, with an empty
// script. It closes when the test ends, and fails the test if any request
// found the script exhausted (unless [AllowExhaustion]).
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := New(Script{}, append([]Option{WithLogf(t.Logf)}, opts...)...)
	s.ts = httptest.NewServer(s)
	s.URL = s.ts.URL
	t.Cleanup(func() {
		s.Close()
		if s.allowEmpty {
			return
		}
		for _, r := range s.Exhausted() {
			t.Errorf("enginetest: request %d (%s %s, last user text %q) found the script exhausted and got %q",
				r.Seq, r.API, r.Path, clip(r.LastUserText(), 120), ExhaustedText)
		}
	})
	return s
}

// Start listens on addr ("127.0.0.1:0" for any free port) and serves in
// the background until [Server.Close].
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("enginetest: listen %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.hs = hs
	s.URL = "http://" + ln.Addr().String()
	s.mu.Unlock()
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("enginetest: serve: %v", err)
		}
	}()
	return nil
}

// Close stops the server, ending hanging replies first.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.closeErr
	}
	s.closed = true
	close(s.quit)
	hs, ts := s.hs, s.ts
	s.mu.Unlock()
	var err error
	if ts != nil {
		ts.Close()
	}
	if hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err = hs.Shutdown(ctx); err != nil {
			err = errors.Join(err, hs.Close())
		}
	}
	s.mu.Lock()
	s.closeErr = err
	s.mu.Unlock()
	return err
}

// Script appends steps to the script.
func (s *Server) Script(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range steps {
		s.steps = append(s.steps, &scripted{Step: st})
	}
}

// Remaining is the number of steps not yet used up (steps marked Always
// are not counted).
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.steps {
		if !st.Always && st.used < st.times() {
			n++
		}
	}
	return n
}

// CheckDone reports an error naming the steps not used up and the requests
// that found the script exhausted, or nil.
func (s *Server) CheckDone() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for i, st := range s.steps {
		if !st.Always && st.used < st.times() {
			errs = append(errs, fmt.Errorf("%s was not used (%d of %d requests)", st.label(i), st.used, st.times()))
		}
	}
	for _, r := range s.reqs {
		if r.Exhausted {
			errs = append(errs, fmt.Errorf("request %d (%s) found the script exhausted", r.Seq, r.API))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("enginetest: script not done: %w", errors.Join(errs...))
	}
	return nil
}

// Requests returns every request so far, in arrival order (side requests,
// probes and unknown paths included).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
	}
	return out
}

// Exhausted returns the requests that found no step left.
func (s *Server) Exhausted() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Exhausted {
			out = append(out, r)
		}
	}
	return out
}

// LastToolResult is the last tool result of the latest request that carried
// one.
func (s *Server) LastToolResult() (ToolResult, bool) {
	reqs := s.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if tr, ok := reqs[i].LastToolResult(); ok {
			return tr, true
		}
	}
	return ToolResult{}, false
}

// WaitForRequest returns the first request (already recorded or still to
// come) that pred accepts; a nil pred accepts any model request.
func (s *Server) WaitForRequest(ctx context.Context, pred func(*Request) bool) (Request, error) {
	if pred == nil {
		pred = func(r *Request) bool { return r.API != Other }
	}
	seen := 0
	for {
		s.mu.Lock()
		reqs := s.reqs[seen:]
		seen = len(s.reqs)
		changed := s.changed
		s.mu.Unlock()
		for _, r := range reqs {
			if pred(r) {
				return *r, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("enginetest: wait for request: %w", context.Cause(ctx))
		}
	}
}

func (st *scripted) times() int {
	if st.Times > 0 {
		return st.Times
	}
	return 1
}

// take picks the step that answers r and records r. A side request takes
// only a step whose Match names it; it returns nil when none does.
func (s *Server) take(r *Request) *Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs) + 1
	r.Step = -1
	var picked *Step
	if r.API != Other {
		for i, st := range s.steps {
			if (!st.Always && st.used >= st.times()) || !st.Match.Accepts(r) {
				continue
			}
			st.used++
			r.Step = i
			cp := st.Step
			picked = &cp
			break
		}
		if picked == nil && r.Side == "" {
			r.Exhausted = true
		}
	}
	s.reqs = append(s.reqs, r)
	close(s.changed)
	s.changed = make(chan struct{})
	if s.record != nil {
		if b, err := json.Marshal(r); err == nil {
			_, _ = s.record.Write(append(b, '\n'))
		}
	}
	return picked
}

func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_%s%06d", prefix, s.nonce, s.ids)
}

// ServeHTTP routes a request by the end of its path.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	p := req.URL.Path
	switch {
	case req.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		s.serveCountTokens(w, req)
	case req.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		s.serveModel(w, req, Anthropic)
	case req.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		s.serveModel(w, req, Responses)
	case req.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		s.serveModel(w, req, Chat)
	case req.Method == http.MethodPost && strings.Contains(p, "/models/") &&
		(strings.HasSuffix(p, ":streamGenerateContent") || strings.HasSuffix(p, ":generateContent")):
		s.serveModel(w, req, Gemini)
	case req.Method == http.MethodPost && strings.HasSuffix(p, ":countTokens"):
		s.serveGeminiCountTokens(w, req)
	case req.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		s.serveModels(w, req)
	case p == "/" && (req.Method == http.MethodHead || req.Method == http.MethodGet):
		s.recordOther(req, nil)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		if req.Method == http.MethodGet {
			io.WriteString(w, "enginetest scripted model\n")
		}
	default:
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		s.recordOther(req, body)
		s.logf("enginetest: %s %s: not a scripted endpoint (404)", req.Method, req.URL.RequestURI())
		writeJSON(w, http.StatusNotFound, map[string]any{
			"error": map[string]any{"type": "not_found_error", "message": "enginetest: no such endpoint: " + req.Method + " " + p},
		})
	}
}

func (s *Server) recordOther(req *http.Request, body []byte) *Request {
	r := &Request{Time: time.Now(), API: Other, Method: req.Method, Path: redactedURI(req), Header: redactedHeader(req.Header)}
	if json.Valid(body) {
		r.Body = body
	}
	s.take(r)
	return r
}

// serveModel answers a model request of any wire format.
func (s *Server) serveModel(w http.ResponseWriter, req *http.Request, api API) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	if err != nil {
		writeAPIError(w, api, http.StatusBadRequest, "", "enginetest: read body: "+err.Error(), 0)
		return
	}
	r := &Request{Time: time.Now(), API: api, Method: req.Method, Path: redactedURI(req), Header: redactedHeader(req.Header), Body: body}
	if err := parseRequest(r, req, body); err != nil {
		s.take(r)
		s.logf("enginetest: request %d %s: %v", r.Seq, api, err)
		writeAPIError(w, api, http.StatusBadRequest, "", "enginetest: "+err.Error(), 0)
		return
	}
	r.Side = s.classify(r)
	step := s.take(r)
	var rep reply
	switch {
	case step != nil:
		rep = s.resolve(r, step)
	case r.Side != "":
		rep = sideReply(r)
	default:
		rep = reply{text: ExhaustedText}
	}
	answer := rep.summary()
	switch {
	case step != nil && step.Status != 0:
		answer = fmt.Sprintf("HTTP %d", step.Status)
	case step != nil && step.Hang && rep.empty():
		answer = "hang"
	case step != nil && step.BreakOff != "":
		answer += ", then break off (" + step.BreakOff + ")"
	}
	s.logf("enginetest: request %d %s model=%q side=%q step=%d last user %q -> %s",
		r.Seq, api, r.Model, r.Side, r.Step, clip(r.LastUserText(), 80), answer)

	ctx := req.Context()
	if step != nil && step.Delay > 0 {
		t := time.NewTimer(time.Duration(step.Delay))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.quit:
			t.Stop()
			return
		}
	}
	if step != nil && step.Status != 0 {
		writeAPIError(w, api, step.Status, step.ErrorType, step.ErrorMessage, time.Duration(step.RetryAfter))
		return
	}
	hang := step != nil && step.Hang
	if hang && rep.empty() {
		s.hang(ctx)
		return
	}
	rep.usage = usage{input: estimateTokens(len(body)), output: estimateTokens(rep.size())}
	out := newOutput(w, r.Stream)
	out.cut = step != nil && step.BreakOff != ""
	switch api {
	case Anthropic:
		s.writeAnthropic(out, r, rep)
	case Responses:
		s.writeResponses(out, r, rep)
	case Chat:
		s.writeChat(out, r, rep, r.includeUsage)
	case Gemini:
		s.writeGemini(out, r, rep)
	}
	if hang {
		s.hang(ctx)
	}
	if step != nil && step.BreakOff == BreakDrop {
		// net/http closes the connection without ending the chunked body:
		// the client's read fails as it does when a network drops.
		panic(http.ErrAbortHandler)
	}
}

// hang blocks until the client goes away or the server closes. Streamed
// content is flushed first: the step's point is a model that stalls.
func (s *Server) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.quit:
	}
}

func parseRequest(r *Request, req *http.Request, body []byte) error {
	switch r.API {
	case Anthropic:
		return parseAnthropic(r, body)
	case Responses:
		return parseResponses(r, body)
	case Chat:
		return parseChat(r, body)
	case Gemini:
		return parseGemini(r, req, body)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func estimateTokens(n int) int { return n/4 + 1 }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// redactedHeader copies h with credentials replaced: a record or log never
// holds a key, even a real one passed by mistake.
func redactedHeader(h http.Header) http.Header {
	h = h.Clone()
	for _, k := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key", "Cookie"} {
		if len(h.Values(k)) > 0 {
			h.Set(k, "[redacted]")
		}
	}
	return h
}

func redactedURI(req *http.Request) string {
	u := *req.URL
	if q := u.Query(); q.Has("key") {
		q.Set("key", "[redacted]")
		u.RawQuery = q.Encode()
	}
	return u.RequestURI()
}

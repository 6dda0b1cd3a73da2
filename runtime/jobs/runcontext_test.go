package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/engines"
)

// fakeContext is a stand-in for the bridge's answers: it says what it was asked.
type fakeContext struct {
	mu       sync.Mutex
	contexts []ContextInput
	searches []SearchInput
	tasks    []string
}

func (f *fakeContext) Context(ctx context.Context, task string, in ContextInput) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks, f.contexts = append(f.tasks, task), append(f.contexts, in)
	if in.Item == "ensemble://task/tsk_0000000000000000" {
		return nil, errors.New("there is no task ensemble://task/tsk_0000000000000000 (it may be in Trash)")
	}
	return map[string]any{"task": task, "item": in.Item, "rel": in.Rel, "note": "token=hunter2hunter2"}, nil
}

func (f *fakeContext) Search(ctx context.Context, task string, in SearchInput) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks, f.searches = append(f.tasks, task), append(f.searches, in)
	return map[string]any{"query": in.Query, "near": task}, nil
}

// runClient starts a run that holds, serves its MCP server and connects to it as the agent would.
func runClient(t *testing.T, rc RunContext, opts ...func(*Options)) (*env, Job, *mcp.ClientSession) {
	t.Helper()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	got := make(chan engines.Spec, 1)
	e := newEnv(t, []step{{do: func(s engines.Spec) { got <- s }}, {hold: hold}})
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	o := Options{Store: e.st, Writer: e.w, Records: e.rec, Drivers: map[string]engines.Driver{"fake": e.driver},
		Asker: e.asker, DataDir: e.data, Home: "/home/nobody", Timing: e.timing, MCPURL: srv.URL, Context: rc}
	for _, f := range opts {
		f(&o)
	}
	e.svc = New(o)
	h = e.svc.MCPHandler()
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	j := e.assign(AssignRequest{Folder: e.folder})
	spec := <-got
	if spec.MCP.URL == "" {
		t.Fatal("the run was given no MCP server")
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: spec.MCP.URL,
		HTTPClient: &http.Client{Transport: headers{spec.MCP.Headers}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	j, _ = e.svc.Get(context.Background(), j.ID)
	return e, j, sess
}

type headers struct{ h map[string]string }

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func callText(t *testing.T, sess *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestRunReadToolsReachTheContext(t *testing.T) {
	rc := &fakeContext{}
	_, j, sess := runClient(t, rc)
	if j.TaskID == "" {
		t.Fatal("the run has no task")
	}
	init := sess.InitializeResult()
	if !strings.Contains(init.Instructions, "ensemble_context") || !strings.Contains(init.Instructions, "ensemble_search") {
		t.Errorf("instructions do not name the read tools: %s", init.Instructions)
	}
	tools, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, tl := range tools.Tools {
		if tl.Name == "ensemble_context" || tl.Name == "ensemble_search" {
			read[tl.Name] = tl.Annotations != nil && tl.Annotations.ReadOnlyHint
		}
	}
	if !read["ensemble_context"] || !read["ensemble_search"] {
		t.Fatalf("read tools (read-only) = %v", read)
	}

	text, isErr := callText(t, sess, "ensemble_context", map[string]any{})
	var out map[string]any
	if isErr || json.Unmarshal([]byte(text), &out) != nil || out["task"] != j.TaskID || out["item"] != "" {
		t.Errorf("ensemble_context {} = %s (error %v), want the run's task %s", text, isErr, j.TaskID)
	}
	if strings.Contains(text, "hunter2") {
		t.Errorf("a secret reached the agent: %s", text)
	}
	text, isErr = callText(t, sess, "ensemble_context", map[string]any{"item": "ensemble://page/pag_0123456789abcdef", "rel": "links to", "limit": 5})
	if isErr || !strings.Contains(text, "pag_0123456789abcdef") {
		t.Errorf("ensemble_context with an item = %s (error %v)", text, isErr)
	}
	text, isErr = callText(t, sess, "ensemble_search", map[string]any{"query": "login retry", "kinds": []string{"task"}})
	if isErr || !strings.Contains(text, `"near":"`+j.TaskID+`"`) {
		t.Errorf("ensemble_search = %s (error %v)", text, isErr)
	}
	rc.mu.Lock()
	if len(rc.contexts) != 2 || rc.contexts[1].Rel != "links to" || rc.contexts[1].Limit != 5 ||
		len(rc.searches) != 1 || rc.searches[0].Kinds[0] != "task" {
		t.Errorf("asked %+v and %+v", rc.contexts, rc.searches)
	}
	rc.mu.Unlock()

	for _, c := range []struct {
		name string
		args any
		want string
	}{
		{"ensemble_context", map[string]any{"handle": "x"}, `ensemble_context takes no field "handle"; its fields are item, rel, offset, limit.`},
		{"ensemble_context", map[string]any{"limit": "ten"}, `ensemble_context's field "limit" must be a number, not string.`},
		{"ensemble_context", map[string]any{"item": "ensemble://task/tsk_0000000000000000"}, "There is no task ensemble://task/tsk_0000000000000000 (it may be in Trash)."},
		{"ensemble_search", map[string]any{"query": 3}, `ensemble_search's field "query" must be text, not number.`},
		{"ensemble_search", map[string]any{}, "Say what to look for in query: words from a record's title or text."},
	} {
		text, isErr := callText(t, sess, c.name, c.args)
		if !isErr || text != c.want {
			t.Errorf("%s %v = %q (error %v), want %q", c.name, c.args, text, isErr, c.want)
		}
	}
}

func TestRunWithoutContextHasNoReadTools(t *testing.T) {
	_, _, sess := runClient(t, nil)
	tools, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if strings.HasPrefix(tl.Name, "ensemble_") {
			t.Errorf("a run with no records to read has %s", tl.Name)
		}
	}
	if strings.Contains(sess.InitializeResult().Instructions, "ensemble_context") {
		t.Error("the instructions name a tool the run does not have")
	}
}

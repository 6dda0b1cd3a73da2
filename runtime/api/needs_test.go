package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

func newNeedsFixture(t *testing.T) (*fixture, *needs.Service) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	nd := needs.New(st, w)
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Keepalive: 50 * time.Millisecond, Needs: nd},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, records.New(st, w))
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		bus.Close()
		srv.Close()
		st.Close()
	})
	return &fixture{srv: srv, api: a, store: st, bus: bus, token: tok}, nd
}

// pending is an Ask waiting in the background.
type pending struct {
	id     string
	answer needs.Answer
	err    error
	done   chan struct{}
}

// ask puts d on Needs me from a goroutine, as a run would, and returns once it is listed.
func ask(t *testing.T, nd *needs.Service, d needs.Decision) *pending {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &pending{done: make(chan struct{})}
	t.Cleanup(func() { cancel(); <-p.done })
	before, _ := nd.List(context.Background(), needs.Filter{All: true})
	go func() {
		defer close(p.done)
		p.answer, p.err = nd.Ask(ctx, d)
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if all, _ := nd.List(context.Background(), needs.Filter{All: true}); len(all) > len(before) {
			p.id = all[0].ID
			return p
		}
	}
	t.Fatal("the decision never reached Needs me")
	return nil
}

func TestNeedsAnsweredOnce(t *testing.T) {
	f, nd := newNeedsFixture(t)
	p := ask(t, nd, needs.NewPermission(needs.Source{RunID: "run_1", Title: "Fix the login retry"}, "npm install left-pad",
		judge.Touches{Programs: []string{"npm"}, Hosts: []string{"registry.npmjs.org"}}, "It reaches the internet."))

	code, list := f.call(t, "GET", "/api/needs", "")
	items, _ := list["needs"].([]any)
	if code != 200 || len(items) != 1 || list["seq"] == nil {
		t.Fatalf("list: %d %v", code, list)
	}
	card := items[0].(map[string]any)
	if card["id"] != p.id || card["call"] != "npm install left-pad" || card["recommended"] != float64(needs.Refuse) ||
		card["source"].(map[string]any)["title"] != "Fix the login retry" {
		t.Errorf("card %v", card)
	}
	if code, one := f.call(t, "GET", "/api/needs/"+p.id, ""); code != 200 || one["status"] != "open" {
		t.Errorf("get: %d %v", code, one)
	}

	// The browser answers first.
	code, d := f.asBrowser(t, f.signIn(t, false), "POST", "/api/needs/"+p.id+"/answer", `{"option": 0}`)
	if code != 200 || d["status"] != "answered" || d["answeredBy"] != needs.ByBrowser {
		t.Fatalf("answer: %d %v", code, d)
	}
	<-p.done
	if p.err != nil || p.answer.Text != "Allow once" {
		t.Fatalf("the run got %+v, %v", p.answer, p.err)
	}
	// The command line is too late, and told by whom and when.
	before := f.count(t, "events")
	code, e := f.call(t, "POST", "/api/needs/"+p.id+"/answer", `{"text": "Refuse"}`)
	msg, _ := e["error"].(string)
	if code != 409 || !strings.HasPrefix(msg, "Already answered by you in the browser at ") || !strings.HasSuffix(msg, ": “Allow once”.") {
		t.Fatalf("second answer: %d %q", code, msg)
	}
	if f.count(t, "events") != before {
		t.Error("the second answer wrote an event")
	}
	if _, list := f.call(t, "GET", "/api/needs", ""); len(list["needs"].([]any)) != 0 {
		t.Errorf("still open: %v", list)
	}
	if _, list := f.call(t, "GET", "/api/needs?all=1&limit=5", ""); len(list["needs"].([]any)) != 1 {
		t.Errorf("all: %v", list)
	}
}

func TestNeedsCommandLineAnswerWithText(t *testing.T) {
	f, nd := newNeedsFixture(t)
	p := ask(t, nd, needs.NewQuestion(needs.Source{Title: "Rename"}, "New name?", []string{"ensemble", "chorus"}, 0, true))
	code, d := f.call(t, "POST", "/api/needs/"+p.id+"/answer", `{"text": "troupe"}`)
	if code != 200 || d["answeredBy"] != needs.ByCommandLine || d["answer"].(map[string]any)["text"] != "troupe" {
		t.Fatalf("answer: %d %v", code, d)
	}
	<-p.done
	if p.answer != (needs.Answer{Option: needs.FreeText, Text: "troupe"}) {
		t.Errorf("the run got %+v", p.answer)
	}
}

func TestNeedsBadAnswersChangeNothing(t *testing.T) {
	f, nd := newNeedsFixture(t)
	p := ask(t, nd, needs.NewQuestion(needs.Source{Title: "Pick"}, "Which?", []string{"Keep it", "Drop it"}, 0, false))
	path := "/api/needs/" + p.id + "/answer"
	before := f.count(t, "events")
	for _, tc := range []struct {
		name, body string
		headers    []string
		want       int
		says       string
	}{
		{"empty object", `{}`, nil, 400, "option's number"},
		{"both", `{"option": 0, "text": "Keep it"}`, nil, 400, "not both"},
		{"out of range", `{"option": 2}`, nil, 400, "from 0 to 1"},
		{"negative", `{"option": -1}`, nil, 400, "from 0"},
		{"free text not allowed", `{"text": "Both"}`, nil, 400, "not free text"},
		{"blank text", `{"text": "  "}`, nil, 400, "empty"},
		{"option as text", `{"option": "1"}`, nil, 400, "must be a number"},
		{"unknown field", `{"choice": 1}`, nil, 400, "Unknown field"},
		{"not json", `yes`, nil, 400, "not valid JSON"},
		{"no body", ``, nil, 400, "empty"},
		{"form body", `option=1`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, e := f.call(t, "POST", path, tc.body, tc.headers...)
			msg, _ := e["error"].(string)
			if code != tc.want || !strings.Contains(msg, tc.says) {
				t.Errorf("got %d %q, want %d saying %q", code, msg, tc.want, tc.says)
			}
		})
	}
	if code, e := f.call(t, "POST", "/api/needs/dec_nope/answer", `{"option": 0}`); code != 404 {
		t.Errorf("unknown id: %d %v", code, e)
	}
	if code, e := f.call(t, "GET", "/api/needs/dec_nope", ""); code != 404 {
		t.Errorf("get unknown id: %d %v", code, e)
	}
	if code, _ := f.call(t, "GET", "/api/needs?limit=x", ""); code != 400 {
		t.Errorf("bad limit: %d", code)
	}
	if got := f.count(t, "events"); got != before {
		t.Errorf("bad answers wrote %d events", got-before)
	}
	if d, _ := nd.Get(context.Background(), p.id); d.Status != needs.Open {
		t.Errorf("status %s after bad answers", d.Status)
	}
}

func TestNeedsSettleLive(t *testing.T) {
	f, nd := newNeedsFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := f.stream(t, ctx, "")
	defer body.Close()
	p := ask(t, nd, needs.NewQuestion(needs.Source{Title: "Pick"}, "Which?", []string{"Keep it", "Drop it"}, 1, false))
	f.call(t, "POST", "/api/needs/"+p.id+"/answer", `{"option": 1}`)
	got := readSSE(t, body, 2)
	if len(got) != 2 || got[0].Kind != "needs.created" || got[1].Kind != "needs.answered" || got[1].Seq <= got[0].Seq {
		t.Fatalf("live events %v", got)
	}
	var d needs.Decision
	if err := json.Unmarshal(got[1].Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.ID != p.id || d.Status != needs.Answered || d.Answer.Text != "Drop it" || d.AnsweredBy != needs.ByCommandLine {
		t.Errorf("needs.answered carries %+v", d)
	}
}

func TestNeedsRoutesNeedSignIn(t *testing.T) {
	f, _ := newNeedsFixture(t)
	for _, path := range []string{"/api/needs", "/api/needs/dec_x"} {
		if code, _ := f.call(t, "GET", path, "", "Authorization", ""); code != 401 {
			t.Errorf("%s without a token: %d", path, code)
		}
	}
	if code, _ := f.call(t, "POST", "/api/needs/dec_x/answer", `{"option": 0}`, "Authorization", ""); code != 401 {
		t.Errorf("answer without a token: %d", code)
	}
}

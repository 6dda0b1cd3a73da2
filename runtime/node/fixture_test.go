package node

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// fixture is a node Service over a real SQLite file, the assistant's own loop and a scripted
// model reached as Anthropic's Messages API.
type fixture struct {
	t     testing.TB
	dir   string
	st    *store.Store
	bus   *events.Bus
	rec   *records.Service
	needs *needs.Service
	asst  *assistant.Service
	svc   *Service
	model *enginetest.Server
}

func newFixture(t testing.TB, opts ...func(*Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), model: enginetest.NewServer(t)}
	f.open(opts...)
	t.Cleanup(f.close)
	return f
}

// open starts the runtime's parts over the fixture's database, as a start of the process does.
func (f *fixture) open(opts ...func(*Config)) {
	t := f.t
	st, err := store.Open(context.Background(), filepath.Join(f.dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	f.st, f.bus = st, events.NewBus()
	w := ledger.New(st, f.bus)
	f.rec = records.New(st, w)
	f.needs = needs.New(st, w)
	if _, err := f.needs.ExpireOrphans(context.Background()); err != nil { // as a start of the runtime does
		t.Fatal(err)
	}
	reg := tools.HubTools()
	for _, tl := range Tools() {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	url := f.model.URL
	f.asst = assistant.New(assistant.Config{Records: f.rec, Store: st, Writer: w, Needs: f.needs, Tools: reg, Timeout: time.Minute,
		Providers: func(p, base string) (models.Provider, error) {
			return models.Source{Getenv: func(string) string { return "test-key" }}.Provider("anthropic", url)
		}})
	prov, model := "anthropic", "claude-test"
	if _, err := f.asst.SetSettings(context.Background(), assistant.SettingsChange{Provider: &prov, Model: &model}); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Store: st, Writer: w, Bus: f.bus, Assistant: f.asst, Records: f.rec, Needs: f.needs, CardWait: 2 * time.Second,
		RetryDelays: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}}
	for _, o := range opts {
		o(&cfg)
	}
	f.svc = New(cfg)
	if err := f.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) close() {
	if f.svc == nil {
		return
	}
	f.svc.Close()
	f.asst.Close(context.Background())
	f.bus.Close()
	f.st.Close()
	f.svc = nil
}

// restart closes everything and opens it again over the same database.
func (f *fixture) restart() {
	f.close()
	f.open()
}

func (f *fixture) node(name string) Node {
	f.t.Helper()
	n, err := f.svc.Create(context.Background(), NewNode{Name: name})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) post(room, body string) Message {
	f.t.Helper()
	m, err := f.svc.PostMessage(context.Background(), room, Post{Body: body})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// settle waits until no turn is queued or running.
func (f *fixture) settle() {
	f.t.Helper()
	f.waitFor("the queue to empty", func() bool {
		var n int
		f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE status IN ('queued', 'running')").Scan(&n)
		return n == 0
	})
}

func (f *fixture) waitFor(what string, ok func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// messages are a room's messages, in order.
func (f *fixture) messages(room string) []Message {
	f.t.Helper()
	ms, err := f.svc.Messages(context.Background(), room, Page{Limit: 200})
	if err != nil {
		f.t.Fatal(err)
	}
	return ms
}

func (f *fixture) nodeTexts(room string) []string {
	var out []string
	for _, m := range f.messages(room) {
		if m.Author == AuthorNode && m.Kind == KindText {
			out = append(out, m.Body)
		}
	}
	return out
}

func (f *fixture) tasks() []records.Task {
	f.t.Helper()
	ts, err := f.rec.ListTasks(context.Background(), records.TaskFilter{})
	if err != nil {
		f.t.Fatal(err)
	}
	return ts
}

// endedMission waits for the one mission there is to end and for the turns after it to settle.
func (f *fixture) endedMission() Mission {
	f.t.Helper()
	var m Mission
	f.waitFor("the mission to end", func() bool {
		var id string
		f.st.Reader().QueryRow("SELECT id FROM node_missions").Scan(&id)
		var err error
		m, err = f.svc.Mission(context.Background(), id)
		return err == nil && m.ended()
	})
	f.settle()
	return m
}

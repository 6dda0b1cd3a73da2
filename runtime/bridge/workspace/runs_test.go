package workspace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// TestRunsAnswerWithTheBridge: a run's read tools get the bridge's own answers, for the run's
// task, with hints that name the run's tools.
func TestRunsAnswerWithTheBridge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	bus := events.NewBus()
	t.Cleanup(bus.Close)
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	me := ledger.Actor{Kind: ledger.Person}
	prj, err := rec.Projects().Create(ctx, me, records.ProjectInput{Name: records.Some("Launch Site"), Summary: records.Some("The new website.")})
	if err != nil {
		t.Fatal(err)
	}
	ada, err := rec.People().Create(ctx, me, records.PersonInput{Name: records.Some("Ada Lovelace"), Role: records.Some("Designer")})
	if err != nil {
		t.Fatal(err)
	}
	task, err := rec.Tasks().Create(ctx, me, records.TaskInput{Title: records.Some("Fix the login retry"),
		ProjectID: records.Some(&prj.ID), OwnerID: records.Some(&ada.ID), Page: records.Some(strings.Repeat("Retry three times. ", 300))})
	if err != nil {
		t.Fatal(err)
	}
	pg, err := rec.Pages().Create(ctx, me, records.PageInput{Title: records.Some("Backoff policy"), Body: records.Some("Exponential backoff with jitter, capped at thirty seconds.")})
	if err != nil {
		t.Fatal(err)
	}
	rc := New(st, rec, rec.Files(filepath.Join(dir, "files"))).Runs()

	decode := func(v any, err error) map[string]any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(v.(json.RawMessage), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	brief := decode(rc.Context(ctx, task.ID, jobs.ContextInput{}))
	raw, _ := json.Marshal(brief)
	if brief["found"] != true || brief["task"].(map[string]any)["id"] != task.ID ||
		brief["project"].(map[string]any)["name"] != "Launch Site" || !strings.Contains(string(raw), "Ada Lovelace") {
		t.Errorf("the task's context = %s", raw)
	}
	if more := brief["page"].(map[string]any)["more"].(string); !strings.Contains(more, "ensemble_context item=ensemble://task/"+task.ID+" offset=") ||
		strings.Contains(string(raw), "ensemble_read ") {
		t.Errorf("the page's hint names a tool the run lacks: %s", more)
	}

	page := decode(rc.Context(ctx, task.ID, jobs.ContextInput{Item: records.Handle("page", pg.ID)}))
	if page["ref"] != records.Handle("page", pg.ID) || !strings.Contains(page["body"].(map[string]any)["text"].(string), "jitter") {
		t.Errorf("the page = %v", page)
	}
	// The brief shows 3,000 characters of the task's page; the rest is read on by offset.
	again := decode(rc.Context(ctx, task.ID, jobs.ContextInput{Item: records.Handle("task", task.ID), Offset: 3000}))
	if text := again["body"].(map[string]any)["text"].(string); len(text) != 2699 { // the stored page is trimmed: 5,699 characters
		t.Errorf("the task's page from 3000 is %d characters, want 2699", len(text))
	}
	links, _ := again["links"].([]any)
	if len(links) == 0 {
		t.Fatalf("the task has no links: %v", again)
	}
	rel := links[0].(map[string]any)["detail"].(string)
	one := decode(rc.Context(ctx, task.ID, jobs.ContextInput{Rel: rel, Limit: 1}))
	if one["rel"] != rel || len(one["items"].([]any)) != 1 || one["record"].(map[string]any)["id"] != task.ID {
		t.Errorf("the task's %q = %v", rel, one)
	}

	hits := decode(rc.Search(ctx, task.ID, jobs.SearchInput{Query: "backoff jitter"}))
	raw, _ = json.Marshal(hits)
	if hits["count"].(float64) < 1 || !strings.Contains(string(raw), records.Handle("page", pg.ID)) {
		t.Errorf("search = %s", raw)
	}

	if _, err := rc.Context(ctx, task.ID, jobs.ContextInput{Item: "ensemble://task/tsk_0000000000000000"}); err == nil ||
		!strings.Contains(err.Error(), "There is no task") {
		t.Errorf("a missing record: %v", err)
	}
	if _, err := rc.Search(ctx, task.ID, jobs.SearchInput{Query: "x", Kinds: []string{"meeting"}}); err == nil {
		t.Error("a kind this Ensemble does not keep was searched")
	}
}

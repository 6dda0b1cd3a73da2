package bridge_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

var readTools = []string{"ensemble_brief", "ensemble_context", "ensemble_search", "ensemble_read", "ensemble_tasks",
	"ensemble_projects", "ensemble_repos", "ensemble_people", "ensemble_skills", "ensemble_deliverables", "ensemble_meetings",
	"ensemble_decisions", "ensemble_today", "ensemble_gaps", "ensemble_files", "ensemble_get_file", "ensemble_spaces",
	"ensemble_docs", "ensemble_actions", "ensemble_act"}

var writeTools = []string{"ensemble_create_task", "ensemble_update_task", "ensemble_upload_file"}

func toolNames(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func TestToolsOfferedByGrant(t *testing.T) {
	r := startRuntime(t)
	full := toolNames(t, connect(t, r, r.key(t, "writer", true), t.TempDir()))
	for _, n := range append(append([]string{}, readTools...), writeTools...) {
		if full[n] == nil {
			t.Errorf("a key with changes allowed is not offered %s", n)
		}
	}
	brief := full["ensemble_brief"].Annotations
	if !brief.ReadOnlyHint || *brief.DestructiveHint || !brief.IdempotentHint || *brief.OpenWorldHint {
		t.Errorf("ensemble_brief annotations = %+v", brief)
	}
	if a := full["ensemble_update_task"].Annotations; a.ReadOnlyHint || !*a.DestructiveHint {
		t.Errorf("ensemble_update_task annotations = %+v", a)
	}
	if a := full["ensemble_create_task"].Annotations; a.ReadOnlyHint || *a.DestructiveHint || a.IdempotentHint {
		t.Errorf("ensemble_create_task annotations = %+v", a)
	}
	// saveTo writes into the working folder, over a file with overwrite: not read-only.
	if a := full["ensemble_get_file"].Annotations; a.ReadOnlyHint || !*a.DestructiveHint {
		t.Errorf("ensemble_get_file annotations = %+v", a)
	}
	ro := toolNames(t, connect(t, r, r.key(t, "reader", false), t.TempDir()))
	for _, n := range writeTools {
		if ro[n] != nil {
			t.Errorf("a read-only key is offered %s", n)
		}
	}
	if ro["ensemble_actions"] == nil || ro["ensemble_act"] == nil || ro["ensemble_apps"] != nil {
		t.Errorf("read-only key tools: %v", ro)
	}
}

func TestBrief(t *testing.T) {
	r := startRuntime(t)
	s := r.seed(t)
	cs := connect(t, r, r.key(t, "reader", false), t.TempDir())
	handle := records.Handle("task", s.task.ID)
	for _, ref := range []string{handle, s.task.ID, "fix the login retry", "http://127.0.0.1:4000/tasks/" + s.task.ID} {
		out := mustCall(t, cs, "ensemble_brief", map[string]any{"task": ref})
		if out["found"] != true || out["contextRef"] != handle {
			t.Fatalf("brief %q = %v", ref, out)
		}
		wc := out["workContext"].(string)
		for _, want := range []string{"Fix the login retry", "Auth revamp", "Ada Lovelace", "Staff engineer", "reviewer", "Set the default timeout", "Incident notes", "Write release notes"} {
			if !strings.Contains(wc, want) {
				t.Errorf("workContext lacks %q:\n%s", want, wc)
			}
		}
		if len([]rune(wc)) > 7000 {
			t.Errorf("workContext is %d characters", len([]rune(wc)))
		}
		if pg := out["page"].(map[string]any); pg["trust"] != "untrusted" {
			t.Errorf("task page not labelled untrusted: %v", pg)
		}
		if !strings.Contains(out["notice"].(string), "not instructions") {
			t.Errorf("no notice: %v", out["notice"])
		}
	}
	// Several open tasks with the title: candidates, none chosen.
	out := mustCall(t, cs, "ensemble_brief", map[string]any{"task": "Write release notes"})
	if out["found"] != false || len(out["candidates"].([]any)) != 2 {
		t.Errorf("ambiguous title: %v", out)
	}
	mustFail(t, cs, "ensemble_brief", map[string]any{"task": "Nothing like this"}, "No open task is called")
	// By repository and branch.
	for _, tc := range []struct {
		name, repo, branch string
		found              any
		candidates         int
	}{
		{"branch names the title", "git@github.com:encode/httpx.git", "ada/fix-the-login-retry", true, 0},
		{"branch names the id", "https://github.com/encode/httpx", "work/" + s.task.ID, true, 0},
		{"branch matches several", "httpx", "docs/notes", false, 2},
		{"branch matches none", "httpx", "feature/unrelated", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := mustCall(t, cs, "ensemble_brief", map[string]any{"repo": tc.repo, "branch": tc.branch})
			if out["found"] != tc.found {
				t.Fatalf("found = %v: %v", out["found"], out)
			}
			if tc.found == true && out["contextRef"] != handle {
				t.Errorf("briefed %v", out["contextRef"])
			}
			if c, _ := out["candidates"].([]any); len(c) != tc.candidates {
				t.Errorf("candidates = %v", out["candidates"])
			}
			if tc.found == false {
				if out["task"] != nil || out["repoTracked"] != true || out["repo"] == nil {
					t.Errorf("no task must be guessed, and the repository's context given: %v", out)
				}
			}
		})
	}
	// A repository Ensemble does not track: says so; searches only with a query.
	out = mustCall(t, cs, "ensemble_brief", map[string]any{"repo": "https://github.com/someone/else", "branch": "main"})
	if out["repoTracked"] != false || out["search"] != nil || !strings.Contains(out["message"].(string), "not tracked") {
		t.Errorf("untracked repo: %v", out)
	}
	out = mustCall(t, cs, "ensemble_brief", map[string]any{"repo": "https://github.com/someone/else", "query": "login"})
	if hits, _ := out["search"].([]any); len(hits) == 0 {
		t.Errorf("untracked repo with a query did not search: %v", out)
	}
}

func TestBriefFromWorkingFolder(t *testing.T) {
	if _, err := execLookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := startRuntime(t)
	s := r.seed(t)
	dir := t.TempDir()
	gitInit(t, dir, "https://github.com/encode/httpx.git", "fix-the-login-retry")
	cs := connect(t, r, r.key(t, "reader", false), dir)
	out := mustCall(t, cs, "ensemble_brief", map[string]any{})
	if out["contextRef"] != records.Handle("task", s.task.ID) {
		t.Errorf("brief from the working folder = %v", out)
	}
	// Not a repository, no task named: a sentence, never an empty brief.
	cs = connect(t, r, r.key(t, "reader2", false), t.TempDir())
	mustFail(t, cs, "ensemble_brief", map[string]any{}, "Name the task")
}

func TestContextSearchRead(t *testing.T) {
	r := startRuntime(t)
	s := r.seed(t)
	cs := connect(t, r, r.key(t, "reader", false), t.TempDir())
	out := mustCall(t, cs, "ensemble_context", map[string]any{"item": records.Handle("project", s.project.ID)})
	rels := map[string]bool{}
	for _, rl := range out["relations"].([]any) {
		rels[rl.(map[string]any)["rel"].(string)] = true
	}
	if !rels["tasks"] || !rels["people"] || !rels["repos"] {
		t.Errorf("project relations = %v", out["relations"])
	}
	out = mustCall(t, cs, "ensemble_context", map[string]any{"item": s.project.ID, "kind": "project", "rel": "tasks", "limit": 1})
	if out["total"].(float64) != 2 || len(out["items"].([]any)) != 1 {
		t.Errorf("rel page = %v", out)
	}
	out = mustCall(t, cs, "ensemble_context", map[string]any{"item": records.Handle("task", s.task.ID), "format": "packet"})
	if p := out["packet"].(string); !strings.Contains(p, "Incident notes") || len([]rune(p)) > 8000 {
		t.Errorf("packet = %q", p)
	}
	mustFail(t, cs, "ensemble_context", map[string]any{"item": "ensemble://task/tsk_0000000000000000"}, "There is no task")

	out = mustCall(t, cs, "ensemble_search", map[string]any{"query": "login retry"})
	hits := out["hits"].([]any)
	if len(hits) == 0 || hits[0].(map[string]any)["ref"] != records.Handle("task", s.task.ID) {
		t.Fatalf("search = %v", out)
	}
	h := hits[0].(map[string]any)
	if h["why"] == "" || h["score"].(float64) <= 0 {
		t.Errorf("hit = %v", h)
	}
	out = mustCall(t, cs, "ensemble_search", map[string]any{"query": "notes", "near": records.Handle("task", s.task.ID)})
	if first := out["hits"].([]any)[0].(map[string]any); first["ref"] != records.Handle("page", s.page.ID) || !strings.Contains(first["why"].(string), "linked") {
		t.Errorf("near: %v", out["hits"])
	}
	out = mustCall(t, cs, "ensemble_search", map[string]any{"query": "zebra quantum"})
	if out["count"].(float64) != 0 || !strings.Contains(out["message"].(string), "Nothing in Ensemble matches") {
		t.Errorf("miss = %v", out)
	}
	out = mustCall(t, cs, "ensemble_search", map[string]any{"query": "notes", "kinds": []string{"page"}, "limit": 1})
	if n := len(out["hits"].([]any)); n == 0 || n > 3 {
		t.Errorf("limit 1 gave %d hits", n)
	}

	out = mustCall(t, cs, "ensemble_read", map[string]any{"id": records.Handle("page", s.page.ID)})
	body := out["body"].(map[string]any)
	if body["trust"] != "untrusted" || len([]rune(body["text"].(string))) != 15000 || !strings.Contains(body["more"].(string), "offset=15000") {
		t.Errorf("long page: trust %v, %d characters, more %v", body["trust"], len([]rune(body["text"].(string))), body["more"])
	}
	out = mustCall(t, cs, "ensemble_read", map[string]any{"id": s.page.ID, "kind": "page", "offset": 15000})
	if t2 := out["body"].(map[string]any)["text"].(string); !strings.HasPrefix(t2, "More detail") && !strings.HasPrefix(t2, "ore detail") && len(t2) == 0 {
		t.Errorf("second part = %q", t2[:min(40, len(t2))])
	}
	mustFail(t, cs, "ensemble_read", map[string]any{"kind": "deliverable", "id": "del_1"}, "keeps no deliverables")
}

func TestLists(t *testing.T) {
	r := startRuntime(t)
	s := r.seed(t)
	cs := connect(t, r, r.key(t, "reader", false), t.TempDir())
	out := mustCall(t, cs, "ensemble_tasks", map[string]any{})
	if out["total"].(float64) != 3 {
		t.Errorf("open tasks = %v", out)
	}
	if out = mustCall(t, cs, "ensemble_tasks", map[string]any{"status": "all"}); out["total"].(float64) != 4 {
		t.Errorf("all tasks = %v", out["total"])
	}
	if out = mustCall(t, cs, "ensemble_tasks", map[string]any{"id": s.task.ID}); out["ref"] != records.Handle("task", s.task.ID) {
		t.Errorf("one task = %v", out)
	}
	for name, want := range map[string]float64{"ensemble_projects": 1, "ensemble_repos": 1, "ensemble_people": 1} {
		if out := mustCall(t, cs, name, map[string]any{}); out["total"].(float64) != want {
			t.Errorf("%s = %v", name, out)
		}
	}
	for _, name := range []string{"ensemble_skills", "ensemble_deliverables", "ensemble_meetings"} {
		if out := mustCall(t, cs, name, map[string]any{}); out["total"].(float64) != 0 || out["message"] == "" {
			t.Errorf("%s = %v", name, out)
		}
	}
	out = mustCall(t, cs, "ensemble_decisions", map[string]any{})
	if _, ok := out["decisions"]; !ok {
		t.Errorf("decisions = %v", out)
	}
	out = mustCall(t, cs, "ensemble_today", map[string]any{})
	if _, ok := out["focus"]; !ok || out["needsMe"] == nil {
		t.Errorf("today = %v", out)
	}
	out = mustCall(t, cs, "ensemble_gaps", map[string]any{})
	if g := out["gaps"].([]any); len(g) < 5 || !strings.Contains(g[0].(string), "no embedding") {
		t.Errorf("gaps = %v", g)
	}
	out = mustCall(t, cs, "ensemble_spaces", map[string]any{})
	if sp := out["spaces"].([]any); len(sp) != 1 || sp[0].(map[string]any)["id"] != records.PersonalSpace {
		t.Errorf("spaces = %v", out)
	}
	// Naming the space by its name works; another space is refused in one sentence.
	mustCall(t, cs, "ensemble_tasks", map[string]any{"space": "personal"})
	mustFail(t, cs, "ensemble_tasks", map[string]any{"space": "Acme team"}, "“Acme team” is not on this computer")
	out = mustCall(t, cs, "ensemble_docs", map[string]any{"query": "saveTo symbolic link"})
	if out["found"] != true || len(out["results"].([]any)) == 0 {
		t.Errorf("docs = %v", out)
	}
	out = mustCall(t, cs, "ensemble_docs", map[string]any{"query": "xylophone"})
	if out["found"] != false || out["home"] != "https://github.com/ensemblework/ensemble/tree/main/docs" {
		t.Errorf("docs miss = %v", out)
	}
	mustFail(t, cs, "ensemble_docs", map[string]any{"query": strings.Repeat("a", 201)}, "1 to 200")
}

func TestWrites(t *testing.T) {
	r := startRuntime(t)
	s := r.seed(t)
	ctx := context.Background()
	cs := connect(t, r, r.key(t, "claude code", true), t.TempDir())
	out := mustCall(t, cs, "ensemble_create_task", map[string]any{"title": "Add retry jitter", "projectName": "auth revamp",
		"people": []string{"Ada Lovelace"}, "due": "2026-12-31", "from": records.Handle("page", s.page.ID)})
	id := out["task"].(map[string]any)["id"].(string)
	task, err := r.rec.Tasks().Get(ctx, id)
	if err != nil || task.Status != records.Proposed || *task.ProjectID != s.project.ID || task.People[0] != s.ada.ID ||
		!strings.Contains(task.Page, "Related: [Incident notes]("+records.Handle("page", s.page.ID)+")") {
		t.Fatalf("created %+v %v", task, err)
	}
	gs, _ := ledger.List(ctx, r.st.Reader(), 0, 1)
	if gs[0].Actor.Kind != ledger.BridgeKey || gs[0].Actor.Name != "claude code" {
		t.Errorf("ledger actor = %+v", gs[0].Actor)
	}
	mustFail(t, cs, "ensemble_create_task", map[string]any{"title": "x", "people": []string{"Nobody"}}, "No person is called")

	// The state machine: a refused move lists the allowed ones.
	mustFail(t, cs, "ensemble_update_task", map[string]any{"task": id, "status": "waiting_approval"}, "it can move to")
	out = mustCall(t, cs, "ensemble_update_task", map[string]any{"task": records.Handle("task", s.task.ID), "status": "in_progress",
		"note": "Found the off-by-one.", "matchTitle": "Fix the login retry"})
	task, _ = r.rec.Tasks().Get(ctx, s.task.ID)
	if task.Status != records.InProgress || !strings.Contains(task.Page, "### Update from claude code") || !strings.Contains(task.Page, "Found the off-by-one.") {
		t.Errorf("updated: %s %q", task.Status, task.Page)
	}
	mustFail(t, cs, "ensemble_update_task", map[string]any{"task": s.task.ID, "status": "done", "matchTitle": "Something else"}, "not “Something else”")
	if task, _ = r.rec.Tasks().Get(ctx, s.task.ID); task.Status != records.InProgress {
		t.Errorf("a matchTitle mismatch changed the task: %s", task.Status)
	}

	// Upload, attached to the task: tagged and linked from its page.
	data := base64.StdEncoding.EncodeToString([]byte("# Latency readout\np99 is 40 ms\n"))
	out = mustCall(t, cs, "ensemble_upload_file", map[string]any{"filename": "latency-readout.md", "dataBase64": data,
		"attachTo": records.Handle("task", s.task.ID), "summary": "Latency numbers"})
	fid := out["file"].(map[string]any)["id"].(string)
	task, _ = r.rec.Tasks().Get(ctx, s.task.ID)
	if !strings.Contains(task.Page, "[@latency-readout.md]("+records.Handle("file", fid)+")") {
		t.Errorf("task page lacks the file link: %q", task.Page)
	}
	// Upload from a path in the working folder (stdio bridges only).
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plan.txt"), []byte("the plan"), 0o644)
	cs2 := connect(t, r, r.key(t, "local", true), dir)
	out = mustCall(t, cs2, "ensemble_upload_file", map[string]any{"path": "plan.txt"})
	if out["file"].(map[string]any)["name"] != "plan.txt" {
		t.Errorf("path upload = %v", out)
	}

	// Actions: reads, a change, a refused delete of a file, a name kept with the person, a bad input.
	out = mustCall(t, cs, "ensemble_actions", map[string]any{})
	if len(out["groups"].([]any)) == 0 || len(out["notOffered"].([]any)) == 0 {
		t.Errorf("actions = %v", out)
	}
	out = mustCall(t, cs, "ensemble_actions", map[string]any{"names": []string{"hub_update_task"}})
	if !strings.Contains(mustJSON(out), "inputSchema") {
		t.Errorf("named action has no schema: %v", out)
	}
	out = mustCall(t, cs, "ensemble_act", map[string]any{"name": "hub_create_page", "input": map[string]any{"title": "Retro", "body": "Went well."}})
	if out["undoable"] != true {
		t.Errorf("act = %v", out)
	}
	out = mustCall(t, cs, "ensemble_act", map[string]any{"name": "hub_update_task", "input": map[string]any{"id": id, "priority": "high"}})
	if task, _ = r.rec.Tasks().Get(ctx, id); task.Priority != "high" || out["undoable"] != true || out["ledgerGroup"] == "" {
		t.Errorf("hub_update_task: %v %s", out, task.Priority)
	}
	// The assistant's own tool runs, with its Prepare: a task named by its exact title becomes its
	// id, and the change is recorded with the key's name.
	mustCall(t, cs, "ensemble_act", map[string]any{"name": "hub_update_task", "input": map[string]any{"id": "Add retry jitter", "priority": "low"}})
	if task, _ = r.rec.Tasks().Get(ctx, id); task.Priority != "low" {
		t.Errorf("hub_update_task by title: priority %s", task.Priority)
	}
	if gs, _ := ledger.List(ctx, r.st.Reader(), 0, 1); gs[0].Actor.Kind != ledger.BridgeKey || gs[0].Actor.Name != "claude code" {
		t.Errorf("hub_update_task ledger actor = %+v", gs[0].Actor)
	}
	mustFail(t, cs, "ensemble_act", map[string]any{"name": "hub_update_task", "input": map[string]any{"id": "No task is called this", "priority": "low"}}, "There is no task with that id or title")
	retro := r.pageID(t, "Retro")
	mustCall(t, cs, "ensemble_act", map[string]any{"name": "hub_edit_page", "input": map[string]any{"id": retro, "edits": []map[string]any{{"old": "Went well.", "new": "Went very well."}}}})
	if p, _ := r.rec.Pages().Get(ctx, retro); !strings.Contains(p.Body, "Went very well.") {
		t.Errorf("hub_edit_page: %q", p.Body)
	}
	out = mustCall(t, cs, "ensemble_act", map[string]any{"name": "hub_how_to", "input": map[string]any{"name": "triage"}})
	if !strings.Contains(mustJSON(out), "guide") {
		t.Errorf("hub_how_to = %v", out)
	}
	mustFail(t, cs, "ensemble_act", map[string]any{"name": "hub_delete_entity", "input": map[string]any{"kind": "document", "id": fid}}, "Files cannot be deleted from editors and agents")
	mustFail(t, cs, "ensemble_act", map[string]any{"name": "hub_update_settings", "input": map[string]any{}}, "not offered to editors and agents")
	mustFail(t, cs, "ensemble_act", map[string]any{"name": "hub_create_page", "input": map[string]any{"titel": "typo"}}, "inputSchema")
	out = mustCall(t, cs, "ensemble_act", map[string]any{"name": "hub_list_tasks", "input": map[string]any{"status": "proposed"}})
	if data := out["result"].(map[string]any)["data"].(map[string]any); data["total"].(float64) != 1 {
		t.Errorf("hub_list_tasks = %v", out)
	}
	// Every action ensemble_actions lists runs, and each one's schema is the one ensemble_act
	// checks: the assistant's tools come with the assistant's schema.
	out = mustCall(t, cs, "ensemble_actions", map[string]any{"names": []string{"hub_update_task", "hub_delete_entity"}})
	if js := mustJSON(out); !strings.Contains(js, `"the task's id, ensemble:// link or exact title"`) || !strings.Contains(js, `"limit":"Refuses kind document`) {
		t.Errorf("named actions = %s", js)
	}
}

func (r *runtime) pageID(t *testing.T, title string) string {
	t.Helper()
	var id string
	if err := r.st.Reader().QueryRow("SELECT id FROM pages WHERE title = ? AND deleted_at IS NULL", title).Scan(&id); err != nil {
		t.Fatalf("page %q: %v", title, err)
	}
	return id
}

func TestReadOnlyKeyCannotWrite(t *testing.T) {
	r := startRuntime(t)
	s := r.seed(t)
	key := r.key(t, "reader", false)
	cs := connect(t, r, key, t.TempDir())
	mustFail(t, cs, "ensemble_act", map[string]any{"name": "hub_create_page", "input": map[string]any{"title": "x"}}, "This key may only read")
	mustFail(t, cs, "ensemble_act", map[string]any{"name": "hub_delete_task", "input": map[string]any{"id": s.task.ID}}, "This key may only read")
	out := mustCall(t, cs, "ensemble_actions", map[string]any{})
	if !strings.Contains(mustJSON(out), `"allowed":false`) {
		t.Errorf("actions for a read-only key do not say which are refused: %v", out)
	}
	// The write routes refuse the key even if a client calls them directly (the tools are not offered).
	status, body := r.post(t, key, "POST", "/api/bridge/write/tasks", `{"title":"sneaky"}`)
	if status != 403 || !strings.Contains(body, "This key may only read") {
		t.Errorf("direct write: %d %s", status, body)
	}
	if n := r.count(t, "tasks"); n != 4 {
		t.Errorf("tasks = %d after refused writes", n)
	}
}

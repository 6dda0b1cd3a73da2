package app

import (
	"strings"
	"testing"
	"time"
)

func TestSessionsCommands(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	if code, out := ensemble(t, data, "sessions"); code != 0 || out != "No agent sessions.\n" {
		t.Fatalf("empty: %d %q", code, out)
	}
	// Two runs of one session, as a finished run and its continuation leave them.
	at := time.Now().UTC().Format(time.RFC3339Nano)
	for _, q := range []string{
		`INSERT INTO tasks (id, space_id, title, status, created_at, updated_at) VALUES ('tsk_a', 'spc_personal', 'Build the ranking API', 'done', '` + at + `', '` + at + `')`,
		`INSERT INTO tasks (id, space_id, title, status, created_at, updated_at) VALUES ('tsk_b', 'spc_personal', 'Page the results', 'waiting_approval', '` + at + `', '` + at + `')`,
		`INSERT INTO jobs (id, task_id, agent, brief, status, folder_kind, work_dir, resource_key, session_id, summary, created_at, updated_at)
			VALUES ('job_a', 'tsk_a', 'claude', 'b', 'done', 'folder', '/tmp/x', '/tmp/x', 'sess-1', 'Built it.', '` + at + `', '` + at + `')`,
		`INSERT INTO jobs (id, task_id, agent, brief, status, folder_kind, work_dir, resource_key, session_id, continues, summary, created_at, updated_at)
			VALUES ('job_b', 'tsk_b', 'claude', 'b', 'done', 'folder', '/tmp/x', '/tmp/x', 'sess-1', 'job_a', '## Paged\nthe results', '` + at + `', '` + at + `')`,
		`INSERT INTO job_settings (job_id, mode, outside, git) VALUES ('job_a', 'ask', 'none', 'local'), ('job_b', 'ask', 'none', 'local')`,
	} {
		if _, err := rt.store.Writer().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	code, out := ensemble(t, data, "sessions")
	if code != 0 || !strings.Contains(out, "job_a") || !strings.Contains(out, "claude") || !strings.Contains(out, "idle") ||
		!strings.Contains(out, "Page the results") || strings.Contains(out, "job_b") {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "sessions", "--q", "billing"); code != 0 || out != "No agent sessions.\n" {
		t.Errorf("no match: %d %q", code, out)
	}
	code, out = ensemble(t, data, "sessions", "show", "job_b")
	if code != 0 || !strings.Contains(out, "Session job_a: claude, idle") || !strings.Contains(out, "ensemble run --continue job_b") ||
		!strings.Contains(out, "Latest report: Paged") || !strings.Contains(out, "Build the ranking API") {
		t.Fatalf("show: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "sessions", "show", "job_nope"); code != 1 || !strings.Contains(out, `There is no agent session with id "job_nope".`) {
		t.Errorf("show missing: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "sessions", "delete", "job_a"); code != 0 || out != "Deleted agent session job_a (“Build the ranking API”); it will not be reopened.\n" {
		t.Errorf("delete: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "sessions", "show", "job_a"); code != 0 || !strings.Contains(out, "it will not be reopened") {
		t.Errorf("show deleted: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "sessions", "--json"); code != 0 || !strings.Contains(out, `"deletedWhy": "person"`) {
		t.Errorf("json: %d %q", code, out)
	}
}

package app

import (
	"bytes"
	"context"
	"filippo.io/age"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// ensemble runs the command line in-process and returns its exit code and output.
func ensemble(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := Main(context.Background(), args, &out, &out)
	return code, out.String()
}

func TestTasksCommands(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir

	code, out := ensemble(t, data, "tasks", "add", "Fix the login retry", "--priority", "high", "--label", "auth", "--due", "2026-12-31")
	m := regexp.MustCompile(`^Added task “Fix the login retry” to To do \((tsk_[0-9a-f]+)\)\.\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("tasks add: %d %q", code, out)
	}
	id := m[1]
	code, out = ensemble(t, data, "tasks", "list")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "2026-12-31") || !strings.Contains(out, "high") {
		t.Fatalf("tasks list: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "tasks", "move", id, "waiting_approval"); code != 1 ||
		out != "ensemble: A task that is To do cannot move to Waiting approval; it can move to In progress, Blocked, Done or Dropped.\n" {
		t.Errorf("refused move: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "tasks", "move", id, "in_progress"); code != 0 || out != "Moved task “Fix the login retry” to In progress.\n" {
		t.Errorf("move: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "tasks", "add", "x", "--due", "soon"); code != 1 || !strings.Contains(out, `Due date "soon" is not a date`) {
		t.Errorf("bad due: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "tasks", "list", "--status", "in_progress", "--json"); code != 0 || !strings.Contains(out, `"status": "in_progress"`) {
		t.Errorf("list --json: %d %q", code, out)
	}

	code, out = ensemble(t, data, "status")
	if code != 0 || !strings.Contains(out, "is running at "+rt.URL) {
		t.Errorf("status: %d %q", code, out)
	}
	dest := filepath.Join(t.TempDir(), "copy.db")
	if code, out = ensemble(t, data, "backup", dest); code != 0 || !strings.HasPrefix(out, "Backed up ") {
		t.Errorf("backup: %d %q", code, out)
	}
	if fi, err := os.Stat(dest); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup is %o, want 600", fi.Mode().Perm())
	}
	if code, out = ensemble(t, data, "backup", dest); code != 1 || !strings.Contains(out, "already exists") {
		t.Errorf("backup over a file: %d %q", code, out)
	}
	// An age backup to a recipient restores into a fresh data folder with the identity only.
	ageID, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	idFile := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(idFile, []byte(ageID.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sealed := filepath.Join(t.TempDir(), "ensemble.age")
	if code, out = ensemble(t, data, "backup", sealed, "--to", ageID.Recipient().String()); code != 0 || !strings.HasPrefix(out, "Backed up ") {
		t.Errorf("backup --to: %d %q", code, out)
	}
	fresh := filepath.Join(t.TempDir(), "restored")
	if code, out = ensemble(t, "--data="+fresh, "restore", sealed); code != 1 || !strings.Contains(out, "--identity FILE or --passphrase") {
		t.Errorf("restore without an identity: %d %q", code, out)
	}
	if code, out = ensemble(t, "--data="+fresh, "restore", sealed, "--identity", idFile); code != 0 || !strings.HasPrefix(out, "Restored ") {
		t.Errorf("restore: %d %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(fresh, "ensemble.db")); err != nil {
		t.Errorf("the restored folder has no database: %v", err)
	}
	if code, out = ensemble(t, "--data="+fresh, "restore", sealed, "--identity", idFile); code != 1 || !strings.Contains(out, "already holds a database") {
		t.Errorf("restore over a database: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "open", "--print"); code != 0 || !strings.HasPrefix(out, rt.URL+"/auth/signin?code=") {
		t.Errorf("open --print: %d %q", code, out)
	}
}

func TestCommandsWithoutRuntime(t *testing.T) {
	data := "--data=" + t.TempDir()
	if code, out := ensemble(t, data, "status"); code != 1 || !strings.Contains(out, "Ensemble is not running") {
		t.Errorf("status: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "tasks", "list"); code != 1 || !strings.Contains(out, "start it with `ensemble serve`") {
		t.Errorf("tasks list: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "backup", filepath.Join(t.TempDir(), "x.db")); code != 1 || !strings.Contains(out, "no such file") {
		t.Errorf("backup without a database: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "serve", "--addr", "0.0.0.0:4000"); code != 1 || !strings.Contains(out, "not on this computer") {
		t.Errorf("serve on all interfaces: %d %q", code, out)
	}
	if code, out := ensemble(t, "--help"); code != 0 || !strings.Contains(out, "ensemble serve") {
		t.Errorf("--help: %d %q", code, out)
	}
}

func TestDefaultDataDir(t *testing.T) {
	home := func() (string, error) { return "/home/ada", nil }
	for _, tc := range []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"linux", nil, "/home/ada/.local/share/ensemble"},
		{"linux", map[string]string{"XDG_DATA_HOME": "/data"}, "/data/ensemble"},
		{"linux", map[string]string{"XDG_DATA_HOME": "relative"}, "/home/ada/.local/share/ensemble"},
		{"darwin", nil, "/home/ada/Library/Application Support/Ensemble"},
		{"windows", map[string]string{"APPDATA": `C:\Users\ada\AppData\Roaming`}, filepath.Join(`C:\Users\ada\AppData\Roaming`, "Ensemble")},
	} {
		got, err := defaultDataDir(tc.goos, func(k string) string { return tc.env[k] }, home)
		if err != nil || got != tc.want {
			t.Errorf("%s %v: got %q, %v; want %q", tc.goos, tc.env, got, err, tc.want)
		}
	}
	if _, err := defaultDataDir("windows", func(string) string { return "" }, home); err == nil {
		t.Error("windows without APPDATA: no error")
	}
	t.Setenv("ENSEMBLE_DATA", "/tmp/from-env")
	if got, _ := dataDir(""); got != "/tmp/from-env" {
		t.Errorf("ENSEMBLE_DATA: got %q", got)
	}
	if got, _ := dataDir("/tmp/flag"); got != "/tmp/flag" {
		t.Errorf("--data: got %q", got)
	}
}

// TestHelpExplainsEachCommand checks that each of the runtime's own commands explains itself beyond
// its one-line summary.
func TestHelpExplainsEachCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "a free port when 4000 is taken"},
		{[]string{"serve"}, "removes api.json"},
		{[]string{"status"}, "Exits 1 when it is not running"},
		{[]string{"tasks"}, "api.json in the data folder"},
		{[]string{"tasks", "list"}, "grouped by status"},
		{[]string{"tasks", "add"}, "in To do unless --status"},
		{[]string{"tasks", "move"}, "a refused move says which ones are"},
		{[]string{"backup"}, "safe while the runtime runs"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out := ensemble(t, append(tc.args, "--help")...)
			if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), tc.want) {
				t.Errorf("--help: %d, want %q in:\n%s", code, tc.want, out)
			}
		})
	}
}

// TestBadCommandLineInput gives tasks, needs, run, judge and secrets input they cannot take: each
// prints one sentence, exits non-zero, and changes nothing.
func TestBadCommandLineInput(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	_, out := ensemble(t, data, "tasks", "add", "Keep me")
	id := regexp.MustCompile(`tsk_[0-9a-f]+`).FindString(out)
	perm := askInBackground(t, rt, needs.NewPermission(needs.Source{RunID: "run_7", Title: "Fix the login retry"},
		"npm install left-pad", judge.Touches{Programs: []string{"npm"}}, "It reaches the internet."))
	count := func() (n int) {
		rt.store.Reader().QueryRow("SELECT (SELECT count(*) FROM ledger_groups) + (SELECT count(*) FROM events)").Scan(&n)
		return n
	}
	before := count()
	for _, c := range []struct {
		args []string
		want string // a part of the sentence
	}{
		{[]string{"tasks", "move", id, "nonsense"}, `"nonsense"`},
		{[]string{"tasks", "move", id}, "Run it as `ensemble tasks move ID STATUS`"},
		{[]string{"tasks", "move", "tsk_nope", "done"}, `There is no task with id "tsk_nope".`},
		{[]string{"tasks", "add"}, "Run it as `ensemble tasks add TITLE`"},
		{[]string{"tasks", "add", ""}, "The title cannot be empty."},
		{[]string{"tasks", "add", "x", "--priority", "asap"}, `Priority "asap"`},
		{[]string{"tasks", "add", "x", "--nope"}, "Unknown flag: --nope; `ensemble tasks add --help` lists the flags."},
		{[]string{"tasks", "list", "extra"}, "Run it as `ensemble tasks list`"},
		{[]string{"tasks", "list", "--status", "nonsense"}, `Unknown status "nonsense".`},
		{[]string{"tasks", "nonsense"}, "There is no command `ensemble tasks nonsense`"},
		{[]string{"needs", "answer", perm.id, "99"}, "There is no option 99: choose 1 to 3."},
		{[]string{"needs", "answer", perm.id, "0"}, "There is no option 0: choose 1 to 3."},
		{[]string{"needs", "answer", perm.id}, "Give a CHOICE"},
		{[]string{"needs", "answer", perm.id, "1", "--text", "x"}, "Give either a CHOICE or --text, not both."},
		{[]string{"needs", "answer", "dec_nope", "1"}, `There is no decision "dec_nope"`},
		{[]string{"needs", "answer"}, "say which decision"},
		{[]string{"needs", "--limit", "many"}, `--limit does not take "many"`},
		{[]string{"needs", "nonsense"}, "There is no command `ensemble needs nonsense`"},
		{[]string{"run"}, "Say what to do in one argument"},
		{[]string{"run", "  ", "--agent", "claude"}, "Say what to do in one argument"},
		{[]string{"run", "Do it"}, "Name the agent with --agent"},
		{[]string{"run", "Do it", "--agent", "nope"}, `There is no agent "nope"`},
		{[]string{"judge"}, "name a command after --"},
		{[]string{"judge", "--"}, "name a command after --"},
		{[]string{"judge", "ls", "--", "-la"}, "Put the command after --"},
		{[]string{"judge", "--mode", "reckless", "--", "ls"}, `--mode "reckless": use ask, review or unattended.`},
		{[]string{"secrets", "set"}, "Run it as `ensemble secrets set NAME`"},
		{[]string{"secrets", "set", "bad name"}, "is not an environment variable name"},
		{[]string{"secrets", "remove", "NOPE"}, "There is no secret named NOPE"},
		{[]string{"secrets", "set-key", "nope"}, `set-key takes anthropic or openai, not "nope"`},
		{[]string{"secrets", "nonsense"}, "There is no command `ensemble secrets nonsense`"},
	} {
		code, out := ensemble(t, append([]string{data}, c.args...)...)
		msg, ok := strings.CutPrefix(out, "ensemble: ")
		msg, one := strings.CutSuffix(msg, "\n")
		if code == 0 || !ok || !one || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, ".") || !strings.Contains(msg, c.want) {
			t.Errorf("%q: %d %q, want one sentence with %q and a non-zero exit", c.args, code, out, c.want)
		}
	}
	if after := count(); after != before {
		t.Errorf("bad input wrote %d ledger groups or events", after-before)
	}
	if status, _, _ := row(t, rt, perm.id); status != "open" {
		t.Errorf("the decision is %s after bad answers", status)
	}
}

package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

func TestEditedPath(t *testing.T) {
	for _, c := range []struct{ tool, input, want string }{
		{"Edit", `{"file_path":"/home/p/.bashrc","old_string":"a","new_string":"b"}`, "/home/p/.bashrc"},
		{"Write", `{"file_path":"src/a.go","content":"x"}`, "src/a.go"},
		{"NotebookEdit", `{"notebook_path":"/n.ipynb"}`, "/n.ipynb"},
		{"Read", `{"file_path":"/etc/hosts"}`, ""},
		{"Bash", `{"command":"echo hi > /tmp/x"}`, ""},
		{"Edit", `not json`, ""},
	} {
		if got := editedPath(c.tool, c.input); got != c.want {
			t.Errorf("editedPath(%s, %s) = %q, want %q", c.tool, c.input, got, c.want)
		}
	}
}

// A file written beside a node run's folder while the run lives is a file changed outside it:
// the watchdog gives the node one attention turn. What changes inside the folder is not.
func TestWatchdogSeesFilesChangedOutsideTheFolder(t *testing.T) {
	sf := newSessFix(t)
	sf.model.Script(enginetest.Say("I will look.").Forever())
	n := sf.node("Dev")
	j := sf.start(n, "Tidy the folder")
	sf.waitJob(j.ID, running, "the run")
	sf.waitFor("the watcher", func() bool {
		sf.svc.outside.mu.Lock()
		defer sf.svc.outside.mu.Unlock()
		return sf.svc.outside.runs[j.ID] != nil
	})
	if err := os.WriteFile(filepath.Join(sf.folder, "inside.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	sibling := filepath.Join(filepath.Dir(sf.folder), "beside.txt")
	if err := os.WriteFile(sibling, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	sf.waitFor("the sibling seen", func() bool { return len(sf.svc.outside.seen(j.ID)) > 0 })
	for _, p := range sf.svc.outside.seen(j.ID) {
		if strings.HasPrefix(p, sf.folder+string(filepath.Separator)) {
			t.Fatalf("a file inside the folder counted as outside: %s", p)
		}
	}
	ctx := context.Background()
	sf.svc.checkWatchdog(ctx)
	sf.svc.checkWatchdog(ctx)
	sf.settle()
	var note string
	sf.st.Reader().QueryRow("SELECT note FROM node_turns WHERE reason = 'attention'").Scan(&note)
	if got := sf.count("SELECT count(*) FROM node_turns WHERE reason = 'attention'"); got != 1 || !strings.Contains(note, "beside.txt") {
		t.Fatalf("%d attention turns, note %q; want one naming beside.txt", got, note)
	}
	sf.agent.next <- "Tidied."
	sf.waitJob(j.ID, ended, "the run to end")
	sf.waitFor("the watcher to stop", func() bool {
		sf.svc.outside.mu.Lock()
		defer sf.svc.outside.mu.Unlock()
		ow := sf.svc.outside.runs[j.ID]
		return ow != nil && !ow.ended.IsZero()
	})
	sf.svc.outside.forget(time.Now().Add(time.Minute))
	if got := sf.svc.outside.seen(j.ID); got != nil {
		t.Fatalf("a forgotten run still has %v", got)
	}
}

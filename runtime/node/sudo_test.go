package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

// hostTestVar makes the test binary a terminal host, as `ensemble terminal-host` is. It reaches
// the host through the node shell's environment, which is the host's own: a name without the
// ENSEMBLE_ prefix, which a node's shell is started without.
const hostTestVar = "NODE_TEST_TERMINAL_HOST"

// TestMain lets this test binary be sudo's askpass helper, and a terminal host
// (terminaladopt_test.go), as Ensemble's own program is.
func TestMain(m *testing.M) {
	if os.Getenv(computer.AskpassSocketVar) != "" {
		os.Exit(computer.Askpass())
	}
	if os.Getenv(hostTestVar) == "1" {
		os.Exit(terminal.HostMain(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// standInSudo asks $SUDO_ASKPASS up to three times for "correct horse", as sudo -A does.
const standInSudo = `#!/bin/bash
shift 3
for i in 1 2 3; do
  pw=$("$SUDO_ASKPASS" "[sudo] password: ") || break
  [ "$pw" = "correct horse" ] && exec "$@"
  echo "Sorry, try again." >&2
done
echo "sudo: 3 incorrect password attempts" >&2
exit 1
`

// withSudo is withComputer with a stand-in sudo, and this binary as its askpass.
func (f *fixture) withSudo(c *Config) {
	bin := filepath.Join(f.dir, "bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "sudo"), []byte(standInSudo), 0o755)
	self, _ := os.Executable()
	home := filepath.Join(f.dir, "home")
	c.Computer = computer.New(computer.Options{Home: home, DataDir: filepath.Join(f.dir, "data"), Workspace: filepath.Join(f.dir, "data", "workspace"),
		Temp: []string{filepath.Join(f.dir, "tmp")}, Store: c.Store, Writer: c.Writer, Askpass: self, SudoProgram: filepath.Join(bin, "sudo")})
}

// A node's computer_sudo waits on a sudo card; a wrong password puts it back for another try, the
// right one runs the command and the node hears its output. The ledger keeps the command's hash,
// and nothing anywhere keeps the password.
func TestComputerSudo(t *testing.T) {
	f := newFixture(t)
	f.close()
	f.open(f.withSudo)
	n := f.node("Ada")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolSudo, map[string]any{"command": "echo installed-htop", "reason": "You asked for htop."}).When(enginetest.Match{LastUserContains: "install htop"}),
		enginetest.Say("Installed.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "installed-htop"}),
		enginetest.ToolCall(ToolSudo, map[string]any{"command": "bash", "reason": "A shell."}).When(enginetest.Match{LastUserContains: "root shell"}),
		enginetest.Say("No.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "opens a shell"}),
	)
	f.post(n.DMRoomID, "Please install htop for me.")
	var card Message
	f.waitFor("the sudo card", func() bool {
		for _, m := range f.messages(n.DMRoomID) {
			if m.Kind == KindApproval {
				card = m
				return true
			}
		}
		return false
	})
	ctx := context.Background()
	if _, err := f.svc.AnswerSudo(ctx, card.ID, []byte("wrong"), "browser"); err == nil || !strings.Contains(err.Error(), "try 1 of 3") {
		t.Fatalf("a wrong password: %v", err)
	}
	m, _, err := f.svc.SudoCard(ctx, card.ID)
	if err != nil {
		t.Fatal(err)
	}
	var c Card
	json.Unmarshal(m.Data, &c)
	if c.Status != CardPending || c.Sudo.Tries != 1 || c.Sudo.Hash != computer.SudoHash("echo installed-htop") {
		t.Fatalf("after a wrong password the card is %s with %d tries", c.Status, c.Sudo.Tries)
	}
	if _, err := f.svc.AnswerSudo(ctx, card.ID, []byte("correct horse"), "browser"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	if _, err := f.svc.AnswerSudo(ctx, card.ID, []byte("correct horse"), "browser"); err == nil {
		t.Fatal("a sudo card was answered twice")
	}

	f.post(n.DMRoomID, "Now open a root shell.")
	f.waitFor("the refusal", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 2 })

	var hashed, plain int
	f.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ? AND data LIKE '%' || ? || '%'", string(KindComputerTool), c.Sudo.Hash).Scan(&hashed)
	f.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ? AND data LIKE '%installed-htop%'", string(KindComputerTool)).Scan(&plain)
	if hashed != 1 || plain != 0 {
		t.Fatalf("the ledger has %d entries with the hash and %d with the command; want 1 and 0", hashed, plain)
	}
	db, _ := os.ReadFile(filepath.Join(f.dir, "ensemble.db"))
	wal, _ := os.ReadFile(filepath.Join(f.dir, "ensemble.db-wal"))
	for _, pw := range []string{"correct horse", "wrong"} {
		if strings.Contains(string(db)+string(wal), pw) {
			t.Fatalf("the password %q is in the database", pw)
		}
	}
}

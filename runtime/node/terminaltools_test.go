//go:build !windows

package node

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

// termFixture is a node Service with terminals of its own, in a workspace under a temporary
// data folder, that hides the value "s3cr3t-canary-value".
func termFixture(t *testing.T) (*fixture, Node, string) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no shell")
	}
	data := t.TempDir()
	home := t.TempDir()
	terms := terminal.New(terminal.Options{Home: home})
	t.Cleanup(terms.Close)
	f := newFixture(t, func(c *Config) {
		c.Terminals = terms
		c.Computer = computer.New(computer.Options{Home: home, DataDir: data, Workspace: filepath.Join(data, "workspace"),
			Temp: []string{filepath.Join(data, "tmp")}, Store: c.Store, Writer: c.Writer,
			Hide: func(s string) string { return strings.ReplaceAll(s, "s3cr3t-canary-value", "[secret CANARY]") }})
	})
	n := f.node("Scout")
	return f, n, filepath.Join(data, "workspace", "nodes", n.Slug)
}

func TestNodeTerminal(t *testing.T) {
	f, n, folder := termFixture(t)
	ctx := context.Background()
	s := f.svc

	open, err := s.terminalOpen(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(open.Session, "ts") || open.Folder != folder {
		t.Fatalf("open = %+v", open)
	}
	if fi, err := os.Stat(folder); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the node's folder: %v, %v", fi, err)
	}
	if len(f.svc.cfg.Terminals.List()) != 1 {
		t.Fatal("the terminal is not in the nodes' own manager")
	}
	id := open.Session

	a, err := s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "echo hi\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Prompt || !hasScreenLine(a.Screen, "hi") {
		t.Fatalf("after echo hi: prompt %v, screen:\n%s", a.Prompt, a.Screen)
	}

	// Secrets are hidden in what the node reads.
	a, err = s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "echo s3cr3t-canary-value\n"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a.Screen, "s3cr3t-canary-value") || !strings.Contains(a.Screen, "[secret CANARY]") {
		t.Fatalf("the secret shows on the screen:\n%s", a.Screen)
	}

	// A dangerous line is refused, and nothing reaches the terminal.
	before, _ := s.terminalRead(n, terminalReadIn{Session: id, Lines: 1000})
	if _, err := s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "rm -rf ~\n"}); err == nil || !strings.Contains(err.Error(), "Nothing was typed") {
		t.Fatalf("rm -rf ~: %v, want a refusal", err)
	}
	if _, err := s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "sudo ls\n"}); err == nil || !strings.Contains(err.Error(), "computer_sudo") {
		t.Fatalf("sudo ls: %v, want computer_sudo", err)
	}
	after, _ := s.terminalRead(n, terminalReadIn{Session: id, Lines: 1000})
	if after.Screen != before.Screen || strings.Contains(after.Screen, "rm -rf") {
		t.Fatalf("a refused line reached the terminal:\n%s", after.Screen)
	}

	// A full-screen program: less on a file, read, then q.
	if _, err := exec.LookPath("less"); err == nil {
		if err := os.WriteFile(filepath.Join(folder, "notes.txt"), []byte(strings.Repeat("a line of notes\n", 100)+"the last line\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		a, err = s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "less notes.txt\n", WaitMs: 2000})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.Screen, "a line of notes") || !f.svc.terms.byID[id].sess.AltScreen() {
			t.Fatalf("less is not on the screen:\n%s", a.Screen)
		}
		a, err = s.terminalSend(ctx, n, terminalSendIn{Session: id, Keys: []string{"End"}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.Screen, "the last line") {
			t.Fatalf("End in less:\n%s", a.Screen)
		}
		if _, err := s.terminalSend(ctx, n, terminalSendIn{Session: id, Keys: []string{"q"}}); err != nil {
			t.Fatal(err)
		}
		// The line after a full-screen program is cleared before it is typed.
		a, err = s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "echo back\n"})
		if err != nil {
			t.Fatal(err)
		}
		if !hasScreenLine(a.Screen, "back") {
			t.Fatalf("after less:\n%s", a.Screen)
		}
	}

	// Up recalls a line the judge cannot know: Enter after it is not sent.
	if _, err := s.terminalSend(ctx, n, terminalSendIn{Session: id, Keys: []string{"Up", "Enter"}}); err == nil {
		t.Fatal("Enter after Up was sent")
	}
	if _, err := s.terminalSend(ctx, n, terminalSendIn{Session: id, Keys: []string{"Ctrl+C"}}); err != nil {
		t.Fatal(err)
	}

	// The scrollback.
	a, err = s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "seq 1 200\n"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.terminalRead(n, terminalReadIn{Session: id, Lines: 300})
	if err != nil {
		t.Fatal(err)
	}
	if !hasScreenLine(r.Screen, "1") || !hasScreenLine(r.Screen, "200") {
		t.Fatalf("the last 300 lines miss the scrollback:\n%s", r.Screen)
	}

	// At most three per node.
	for range 2 {
		if _, err := s.terminalOpen(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.terminalOpen(ctx, n); err == nil {
		t.Fatal("a fourth terminal opened")
	}

	// Another node cannot reach it.
	other := f.node("Other")
	if _, err := s.terminalRead(other, terminalReadIn{Session: id}); err == nil {
		t.Fatal("another node read the terminal")
	}

	if _, err := s.terminalClose(n, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.terminalRead(n, terminalReadIn{Session: id}); err == nil {
		t.Fatal("a closed terminal still reads")
	}
	var lines, leaked int
	f.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ? AND json_extract(data, '$.tool') = 'terminal_line' AND json_extract(data, '$.program') = 'echo'", string(KindComputerTool)).Scan(&lines)
	f.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ? AND data LIKE '%hi%' AND json_extract(data, '$.tool') = 'terminal_line'", string(KindComputerTool)).Scan(&leaked)
	if lines == 0 || leaked != 0 {
		t.Errorf("%d terminal lines of echo in the ledger, %d with what was typed; want some, and none", lines, leaked)
	}
}

func TestNodeTerminalScreenshot(t *testing.T) {
	f, n, folder := termFixture(t)
	ctx := context.Background()
	a, err := f.svc.terminalScreenshot(ctx, n, terminalShotIn{Command: `printf '\033[1;33mBuild passed\033[0m: 12 tests\n'; echo "second line"; sleep 10`, Seconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Screen, "Build passed: 12 tests") || filepath.Dir(a.Image) != filepath.Join(folder, "screenshots") {
		t.Fatalf("screenshot = %+v", a)
	}
	b, err := os.ReadFile(a.Image)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds(); got.Dx() != 120*7 || got.Dy() != 32*13 {
		t.Fatalf("picture %v, want 840×416", got)
	}
	if p := os.Getenv("ENSEMBLE_TERMINAL_PNG"); p != "" {
		os.WriteFile(p, b, 0o644)
	}
	if _, err := f.svc.terminalScreenshot(ctx, n, terminalShotIn{Command: "rm -rf ~"}); err == nil {
		t.Fatal("a dangerous command ran for a screenshot")
	}
	if len(f.svc.cfg.Terminals.List()) != 0 {
		t.Fatal("the screenshot's terminal is still open")
	}
}

func hasScreenLine(screen, want string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// TestTerminalToolsOffered: the terminal tools go only to the owner's turns that speak of a
// terminal or carry on work.
func TestTerminalToolsOffered(t *testing.T) {
	dm := Room{Kind: RoomDM}
	tests := []struct {
		name string
		turn Turn
		text string
		want bool
	}{
		{"owner asks for a terminal", Turn{Lane: "conv:x:s", Reason: ReasonMessage, ByOwner: true}, "open a terminal and run htop", true},
		{"owner says hello", Turn{Lane: "conv:x:s", Reason: ReasonMessage, ByOwner: true}, "hello, how are you?", false},
		{"someone else asks", Turn{Lane: "conv:x:s", Reason: ReasonMessage}, "open a terminal", false},
		{"carrying on work", Turn{Lane: "conv:x:s", Reason: ReasonApproval, ByOwner: true}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Contains(toolsFor(tt.turn, dm, Node{}, tt.text, false), ToolTerminalSend)
			if got != tt.want {
				t.Fatalf("terminal_send offered: got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTerminalInATurn: a node's turn opens a terminal and types into it through the model's
// tool calls, and the model reads the screen.
func TestTerminalInATurn(t *testing.T) {
	f, n, _ := termFixture(t)
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolTerminalOpen, map[string]any{}).When(enginetest.Match{LastUserContains: "terminal"}),
		enginetest.Say("It is open.").When(enginetest.Match{ToolResult: &yes}),
	)
	f.post(n.DMRoomID, "Open a terminal for me, please.")
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	f.settle()
	reqs := f.model.Requests()
	if len(reqs) < 2 || !strings.Contains(string(reqs[len(reqs)-1].Body), "Terminal ts") {
		t.Fatalf("the model did not read the terminal's answer")
	}
	if got := len(f.svc.cfg.Terminals.List()); got != 1 {
		t.Fatalf("%d terminals open, want 1", got)
	}
}

// A terminal in a folder other than the node's own waits on a computer card, like a command there,
// and opens there once its owner answers.
func TestTerminalOpenElsewhereAsks(t *testing.T) {
	f, n, _ := termFixture(t)
	other := t.TempDir()
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolTerminalOpen, map[string]any{"folder": other}).When(enginetest.Match{LastUserContains: "open a terminal"}),
		enginetest.Say("Opened.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "ts"}),
	)
	f.post(n.DMRoomID, "Please open a terminal in that folder.")
	var card Message
	f.waitFor("the computer card", func() bool {
		for _, m := range f.messages(n.DMRoomID) {
			if m.Kind == KindApproval {
				card = m
				return true
			}
		}
		return false
	})
	if _, err := f.svc.Answer(context.Background(), card.ID, DecideOnce, "browser"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	f.svc.terms.mu.Lock()
	var folders []string
	for _, tm := range f.svc.terms.byID {
		folders = append(folders, tm.sess.Info().Folder)
	}
	f.svc.terms.mu.Unlock()
	if len(folders) != 1 || folders[0] != other {
		t.Fatalf("terminals open in %v; want one in %s", folders, other)
	}
}

// A terminal screenshot a node takes in its turn shows in the chat as a picture it shared.
func TestTerminalScreenshotInTheChat(t *testing.T) {
	f, n, _ := termFixture(t)
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolTerminalScreenshot, map[string]any{"command": "top -b -n 1 | head -n 25", "seconds": 2}).When(enginetest.Match{LastUserContains: "screenshot of top"}),
		enginetest.Say("Here it is.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "shown to your owner"}),
	)
	f.post(n.DMRoomID, "Take a screenshot of top for me.")
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 2 })
	var shot FileData
	var id string
	for _, m := range f.messages(n.DMRoomID) {
		var d FileData
		if json.Unmarshal(m.Data, &d) == nil && d.Type == "file" {
			shot, id = d, m.ID
		}
	}
	if len(shot.Files) != 1 || shot.Files[0].Type != "image/png" {
		t.Fatalf("the chat's picture: %+v", shot)
	}
	r, _, err := f.svc.SharedFile(context.Background(), id, shot.Files[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	img, err := png.Decode(r)
	if err != nil || img.Bounds().Dx() < 400 {
		t.Fatalf("the picture: %v, %v", img.Bounds(), err)
	}
	if out := os.Getenv("ENSEMBLE_TERMINAL_PNG"); out != "" {
		r.Seek(0, 0)
		b, _ := io.ReadAll(r)
		os.WriteFile(out, b, 0o644)
	}
}

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
)

// withComputer gives the fixture's nodes the computer tools, over folders of the fixture's own.
func (f *fixture) withComputer(c *Config) {
	home := filepath.Join(f.dir, "home")
	os.MkdirAll(filepath.Join(home, "code"), 0o755)
	c.Computer = computer.New(computer.Options{Home: home, DataDir: filepath.Join(f.dir, "data"), Workspace: filepath.Join(f.dir, "data", "workspace"),
		Temp: []string{filepath.Join(f.dir, "tmp")}, Store: c.Store, Writer: c.Writer})
}

// A node runs a command in its own folder without asking; one in another folder waits on a
// computer card, runs once its owner answers Always, and the answer holds after a restart. A
// command under the floor is refused with why, and nothing runs.
func TestComputerRunDecisionOrder(t *testing.T) {
	f := newFixture(t)
	f.close()
	f.open(f.withComputer)
	n := f.node("Ada")
	code := filepath.Join(f.dir, "home", "code")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolRun, map[string]any{"command": "echo mine > note.txt && cat note.txt"}).When(enginetest.Match{LastUserContains: "write a note"}),
		enginetest.ToolCall(ToolShareFile, map[string]any{"path": "note.txt", "caption": "Your note"}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "exited 0"}),
		enginetest.Say("Noted.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "Shared note.txt"}),
		enginetest.ToolCall(ToolRun, map[string]any{"command": "ls && echo listed", "folder": code}).When(enginetest.Match{LastUserContains: "list my code"}),
		enginetest.Say("Listed.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "listed"}),
		enginetest.ToolCall(ToolRun, map[string]any{"command": "ls && echo listed", "folder": code}).When(enginetest.Match{LastUserContains: "folder again"}),
		enginetest.Say("Listed again.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "listed"}),
		enginetest.ToolCall(ToolRun, map[string]any{"command": "rm -rf ~"}).When(enginetest.Match{LastUserContains: "wipe"}),
		enginetest.Say("I cannot.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "run it themselves"}),
	)
	f.post(n.DMRoomID, "Please write a note in your folder.")
	f.waitFor("the first reply and the shared file", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 2 })
	if b, _ := os.ReadFile(filepath.Join(f.dir, "data", "workspace", "nodes", n.Slug, "note.txt")); string(b) != "mine\n" {
		t.Fatalf("the node's folder holds %q", b)
	}

	var shared Message
	for _, m := range f.messages(n.DMRoomID) {
		var d FileData
		if json.Unmarshal(m.Data, &d) == nil && d.Type == "file" {
			shared = m
		}
	}
	var fd FileData
	json.Unmarshal(shared.Data, &fd)
	if shared.Body != "Your note" || len(fd.Files) != 1 || fd.Files[0].Name != "note.txt" || fd.Files[0].Size != 5 {
		t.Fatalf("the shared file's message: %q %+v", shared.Body, fd)
	}
	if r, _, err := f.svc.SharedFile(context.Background(), shared.ID, fd.Files[0].ID); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}

	f.post(n.DMRoomID, "Now list my code folder.")
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
	var c Card
	json.Unmarshal(card.Data, &c)
	if c.Type != "computer" || c.Computer == nil || len(c.Computer.Ask) != 1 || c.Computer.Ask[0].Value != code || !c.Computer.Always {
		t.Fatalf("the card: %s %+v", card.Body, c.Computer)
	}
	if _, err := f.svc.Answer(context.Background(), card.ID, "sometimes", "browser"); err == nil {
		t.Fatal("a decision the card does not take was taken")
	}
	if _, err := f.svc.Answer(context.Background(), card.ID, DecideAlways, "browser"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the second reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 3 })

	f.close() // a restart
	f.open(f.withComputer)
	f.post(n.DMRoomID, "Please list my code folder again.")
	f.waitFor("the third reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 4 })
	cards := 0
	for _, m := range f.messages(n.DMRoomID) {
		if m.Kind == KindApproval {
			cards++
		}
	}
	if cards != 1 {
		t.Fatalf("%d cards; the Always answer should have held after the restart", cards)
	}

	kept, err := f.svc.ComputerAnswers(context.Background(), n.Slug)
	if err != nil || len(kept) != 1 || kept[0].Keep != computer.KeepAlways || kept[0].Scope.Value != code {
		t.Fatalf("kept answers: %+v, %v", kept, err)
	}
	if err := f.svc.RevokeComputerAnswer(context.Background(), n.Slug, kept[0].ID); err != nil {
		t.Fatal(err)
	}
	if kept, _ := f.svc.ComputerAnswers(context.Background(), n.Slug); len(kept) != 0 {
		t.Fatalf("after revoking: %+v", kept)
	}
	if err := f.svc.RevokeComputerAnswer(context.Background(), n.Slug, kept[0].ID); err == nil {
		t.Fatal("an answer was revoked twice")
	}

	f.post(n.DMRoomID, "Then run a command to wipe my home folder.")
	f.waitFor("the refusal", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 5 })
	if _, err := os.Stat(code); err != nil {
		t.Fatalf("the floor let the command run: %v", err)
	}
	var ledgered int
	f.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ?", string(KindComputerTool)).Scan(&ledgered)
	if ledgered != 5 {
		t.Errorf("%d computer calls in the ledger; want 5", ledgered)
	}
	var leaked int
	f.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ? AND data LIKE '%listed%'", string(KindComputerTool)).Scan(&leaked)
	if leaked != 0 {
		t.Error("a command's output is in the ledger")
	}
}

// The computer tools are offered only in turns the owner started, by need.
func TestComputerToolsOffered(t *testing.T) {
	owner := Turn{ByOwner: true, Reason: ReasonMessage, Lane: "conv:r:shared"}
	for _, tt := range []struct {
		t    Turn
		n    Node
		text string
		has  bool
		want bool
	}{
		{owner, Node{}, "run the tests in ~/code", true, true},
		{owner, Node{}, "good morning!", true, false},
		{owner, Node{}, "run the tests", false, false},
		{Turn{ByOwner: false, Reason: ReasonMessage}, Node{}, "run the tests", true, false},
		{owner, Node{ParentID: "nd_parent"}, "run the tests", true, false},
		{Turn{ByOwner: true, Reason: ReasonApproval}, Node{}, "", true, true},
	} {
		got := len(computerToolsFor(tt.t, tt.n, tt.text, tt.has)) > 0
		if got != tt.want {
			t.Errorf("%q (owner %v, helper %v): offered %v; want %v", tt.text, tt.t.ByOwner, tt.n.ParentID != "", got, tt.want)
		}
	}
	if !strings.Contains(missionKey(Turn{Lane: "work:msn_1:s1:nd_1"}), "msn_1") || missionKey(Turn{Lane: "conv:r:shared"}) != "lane:conv:r:shared" {
		t.Error("missionKey does not name the plan, else the conversation")
	}
}

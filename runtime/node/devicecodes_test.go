package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// A sign-in's code reaches its owner on one card only they see, in the command's conversation;
// the node hears that they have it, and the card is done when the command succeeds.
func TestComputerRunDeviceCode(t *testing.T) {
	f := newFixture(t)
	f.close()
	f.open(f.withComputer)
	n := f.node("Ada")
	// An az of its own, which prints Microsoft's device code and then signs in.
	bin := filepath.Join(f.dir, "data", "workspace", "nodes", n.Slug, "bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "az"), []byte("#!/bin/sh\n"+
		"printf '\\033[93mTo sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code ABCD12345 to authenticate.\\033[0m\\n' >&2\n"+
		"sleep 0.5\necho '[{\"name\": \"Pay-As-You-Go\"}]'\n"), 0o755)
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolRun, map[string]any{"command": `PATH="$PWD/bin:$PATH" az login --use-device-code`}).When(enginetest.Match{LastUserContains: "sign in to Azure"}),
		enginetest.Say("Your code is on the card.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "got it on a card"}),
		enginetest.Say("Signed in.").When(enginetest.Match{LastUserContains: "Your background command"}),
	)
	f.post(n.DMRoomID, "Please sign in to Azure.")
	var card Message
	f.waitFor("the code card to be done", func() bool {
		for _, m := range f.messages(n.DMRoomID) {
			var c DeviceCodeCard
			if json.Unmarshal(m.Data, &c) == nil && c.Type == DeviceCodeType && c.Status == DeviceCodeDone {
				card = m
				return true
			}
		}
		return false
	})
	var c DeviceCodeCard
	json.Unmarshal(card.Data, &c)
	if !card.Private || card.Kind != KindText || c.URL != "https://microsoft.com/devicelogin" || c.Code != "ABCD12345" ||
		!strings.HasPrefix(c.Operation, "cmd_") || c.ExpiresAt.IsZero() || !strings.Contains(c.Command, "az login") {
		t.Fatalf("the card: %+v %+v", card, c)
	}
	if !strings.Contains(card.Body, "https://microsoft.com/devicelogin") || !strings.Contains(card.Body, "ABCD12345") {
		t.Errorf("the card's text %q lacks the page or the code", card.Body)
	}
	f.waitFor("the replies", func() bool {
		texts := strings.Join(f.nodeTexts(n.DMRoomID), "\n")
		return strings.Contains(texts, "Your code is on the card.") && strings.Contains(texts, "Signed in.")
	})
	cards := 0
	for _, m := range f.messages(n.DMRoomID) {
		var c DeviceCodeCard
		if json.Unmarshal(m.Data, &c) == nil && c.Type == DeviceCodeType {
			cards++
		}
	}
	if cards != 1 {
		t.Errorf("%d code cards, want one", cards)
	}
}

// A page a command opens through xdg-open or $BROWSER (as python's webbrowser does) reaches
// OpenCLISignIn with its address and the command's conversation.
func TestComputerRunOpensPage(t *testing.T) {
	var mu sync.Mutex
	var opened []CLISignIn
	f := newFixture(t)
	f.close()
	f.open(f.withComputer, func(c *Config) {
		c.OpenCLISignIn = func(_ context.Context, in CLISignIn) error {
			mu.Lock()
			defer mu.Unlock()
			opened = append(opened, in)
			return nil
		}
	})
	n := f.node("Ada")
	// A command-line tool of its own that opens its sign-in pages as such tools do.
	bin := filepath.Join(f.dir, "data", "workspace", "nodes", n.Slug, "bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "cli"), []byte("#!/bin/sh\nxdg-open 'https://example.com/login?x=1'\nsleep 0.3\n\"$BROWSER\" https://github.com/login/device\nsleep 0.3\n"), 0o755)
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolRun, map[string]any{"command": "./bin/cli"}).When(enginetest.Match{LastUserContains: "open the pages"}),
		enginetest.Say("Opened.").When(enginetest.Match{ToolResult: &yes}),
	)
	f.post(n.DMRoomID, "Please run a command to open the pages.")
	f.waitFor("both pages", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(opened) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	if opened[0].URL != "https://example.com/login?x=1" || opened[1].URL != "https://github.com/login/device" {
		t.Fatalf("opened %+v", opened)
	}
	for _, o := range opened {
		if o.NodeID != n.ID || o.RoomID != n.DMRoomID || !strings.HasPrefix(o.CommandID, "cmd_") || o.Which != "" || o.ExpiresAt.IsZero() {
			t.Errorf("opened %+v", o)
		}
	}
}

// A second run of the same sign-in replaces the first (its card says so), and a restart ends
// the code cards of the commands it ended.
func TestComputerRunSignInReplaced(t *testing.T) {
	f := newFixture(t)
	f.close()
	f.open(f.withComputer)
	n := f.node("Ada")
	bin := filepath.Join(f.dir, "data", "workspace", "nodes", n.Slug, "bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/sh\n"+
		"echo \"! First copy your one-time code: $(date +%N | cut -c1-4)-ABCD\"\n"+
		"echo 'Open this URL to continue in your web browser: https://github.com/login/device'\nsleep 60\n"), 0o755)
	yes := true
	line := `PATH="$PWD/bin:$PATH" gh auth login --web`
	f.model.Script(
		enginetest.ToolCall(ToolRun, map[string]any{"command": line}).When(enginetest.Match{LastUserContains: "sign in to GitHub"}),
		enginetest.Say("On the card.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "got it on a card"}),
		enginetest.ToolCall(ToolRun, map[string]any{"command": line}).When(enginetest.Match{LastUserContains: "run the sign-in again"}),
		enginetest.Say("A new card.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "got it on a card"}),
	)
	codeCards := func() (out []DeviceCodeCard) {
		for _, m := range f.messages(n.DMRoomID) {
			var c DeviceCodeCard
			if json.Unmarshal(m.Data, &c) == nil && c.Type == DeviceCodeType {
				out = append(out, c)
			}
		}
		return out
	}
	f.post(n.DMRoomID, "Please sign in to GitHub.")
	f.waitFor("the first reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 2 })
	f.post(n.DMRoomID, "It did not work; run the sign-in again.")
	f.waitFor("the second reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 4 })
	cs := codeCards()
	if len(cs) != 2 || cs[0].Status != DeviceCodeReplaced || cs[1].Status != DeviceCodePending || cs[0].Operation == cs[1].Operation {
		t.Fatalf("the code cards: %+v", cs)
	}
	if running := f.svc.cfg.Computer.Running(n.ID); len(running) != 1 || running[0].ID != cs[1].Operation {
		t.Fatalf("running: %+v; want the newer sign-in only", running)
	}
	old := f.svc.cfg.Computer
	f.close() // a restart ends the command
	old.Close()
	f.open(f.withComputer)
	if cs := codeCards(); cs[1].Status != DeviceCodeExpired {
		t.Fatalf("after a restart: %+v", cs[1])
	}
}

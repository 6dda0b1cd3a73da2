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

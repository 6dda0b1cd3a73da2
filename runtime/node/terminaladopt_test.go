//go:build !windows

package node

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

func hostManager(t *testing.T, data string) *terminal.Manager {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return terminal.New(terminal.Options{Max: 24, Home: t.TempDir(), Host: &terminal.HostOptions{Program: exe, DataDir: data}})
}

// TestNodeTerminalAdopted: a node's terminal outlives the runtime in its host; the next runtime
// takes it back for the node, whose sends go on in it, within the node's limit of terminals.
func TestNodeTerminalAdopted(t *testing.T) {
	t.Setenv(hostTestVar, "1")
	data := t.TempDir()
	first := hostManager(t, data)
	f, n, _ := termFixture(t)
	s := f.svc
	s.cfg.Terminals = first
	ctx := context.Background()

	open, err := s.terminalOpen(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	id := open.Session
	if a, err := s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "echo hi\n"}); err != nil || !hasScreenLine(a.Screen, "hi") {
		t.Fatalf("echo hi: %v\n%s", err, a.Screen)
	}
	// A screenshot's terminal, left by a runtime that stopped in the middle of it.
	shot, err := first.Start(terminal.StartOptions{Folder: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}

	first.Detach() // the runtime stops
	f.waitFor("the node's terminal to be let go", func() bool {
		_, err := s.term(n, id)
		return err != nil
	})

	second := hostManager(t, data)
	t.Cleanup(second.Close)
	s.cfg.Terminals = second
	s.AdoptTerminals(ctx, second.Reattach())
	a, err := s.terminalRead(n, terminalReadIn{Session: id})
	if err != nil || !hasScreenLine(a.Screen, "hi") {
		t.Fatalf("read after the restart: %v\n%s", err, a.Screen)
	}
	a, err = s.terminalSend(ctx, n, terminalSendIn{Session: id, Text: "echo again\n"})
	if err != nil || !a.Prompt || !hasScreenLine(a.Screen, "again") {
		t.Fatalf("echo again: %v, prompt %v\n%s", err, a.Prompt, a.Screen)
	}
	f.waitFor("the screenshot's terminal to be closed", func() bool { return second.Get(shot.ID()) == nil })

	// The terminal taken back counts towards the node's three.
	for range TerminalsPerNode - 1 {
		if _, err := s.terminalOpen(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.terminalOpen(ctx, n); !problem.Is(err, problem.KindConflict) {
		t.Fatalf("a fourth terminal: %v, want refused", err)
	}
	if _, err := os.Stat(filepath.Join(data, "terminals", id+".json")); err != nil {
		t.Fatalf("the host's file: %v", err)
	}
	if _, err := s.terminalClose(n, id); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the closed terminal to leave the node's", func() bool { _, err := s.term(n, id); return err != nil })
}

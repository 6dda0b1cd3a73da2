//go:build !windows

package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

// TestMain lets the test binary be a terminal host when a runtime under test starts one: the host
// is this very program (os.Executable), as `ensemble terminal-host` is in the real one.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "terminal-host" {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestTerminalHostRuntime: a node's terminal goes on through a restart of the runtime, and the next
// runtime has it for the node, with its screen.
func TestTerminalHostRuntime(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	start := func() *Runtime {
		t.Helper()
		rt, err := startRuntime(ctx, runtimeConfig{DataDir: data, Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	rt := start()
	n, err := rt.nodes.Create(ctx, node.NewNode{Name: "Scout"})
	if err != nil {
		rt.Close()
		t.Fatal(err)
	}
	s, err := rt.nodeTerms.Start(terminal.StartOptions{Node: n.ID, Folder: t.TempDir(), Shell: "/bin/sh", Args: []string{"-i"}})
	if err != nil {
		rt.Close()
		t.Fatal(err)
	}
	waitText(t, s, "the prompt", func(text string) bool { return strings.TrimSpace(text) != "" })
	s.Write([]byte("echo hi\r"))
	waitText(t, s, "hi", func(text string) bool { return hasTermLine(text, "hi") })
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	<-s.Done()

	rt = start()
	t.Cleanup(func() {
		rt.nodeTerms.Close() // Close alone would leave the shell to its host
		rt.Close()
	})
	again := rt.nodeTerms.Get(s.ID())
	if again == nil {
		t.Fatalf("the node's terminal is not back after the restart: %v", rt.nodeTerms.List())
	}
	if !hasTermLine(again.Text(), "hi") {
		t.Fatalf("the screen after the restart:\n%s", again.Text())
	}
	again.Write([]byte("echo again\r"))
	waitText(t, again, "again", func(text string) bool { return hasTermLine(text, "again") })
}

func waitText(t *testing.T, s *terminal.Session, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(s.Text()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; screen:\n%s", what, s.Text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasTermLine(text, want string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

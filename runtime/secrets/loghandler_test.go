package secrets

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestHidingHandler(t *testing.T) {
	const value = "Zq8-log-canary"
	d := NewRedactor()
	d.set("CANARY", value)
	var buf bytes.Buffer
	log := slog.New(HidingHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), d))
	log.With("command", "echo "+value).WithGroup("run").Debug("agent printed "+value,
		"output", value+"\n", "err", errors.New("exit 1: "+value), slog.Group("call", "input", value), "n", 7)
	out := buf.String()
	if strings.Contains(out, value) {
		t.Fatalf("the log holds the value:\n%s", out)
	}
	for _, want := range []string{"agent printed [secret CANARY]", "command=\"echo [secret CANARY]\"", "run.err=\"exit 1: [secret CANARY]\"", "run.call.input=\"[secret CANARY]\"", "run.n=7"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not say %s:\n%s", want, out)
		}
	}
}

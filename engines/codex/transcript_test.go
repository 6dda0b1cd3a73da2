package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestTranscripts replays what the real Codex printed in recorded runs (testdata/transcripts,
// recorded by the real-CLI tests with ENSEMBLE_RECORD_TRANSCRIPTS) and checks the events the
// driver reads from it against their golden files. The answers to Ensemble's own requests are left
// out: nothing waits for them in a replay.
func TestTranscripts(t *testing.T) {
	enginetest.GoldenTranscripts(t, "testdata/transcripts", func(t *testing.T, transcript []byte, h *enginetest.Host) {
		s := newSession(h, "/work", testLogger(t))
		s.ended, s.steer = func() {}, func(context.Context, string) error { return nil }
		c := newConn(io.Discard, s)
		if err := c.serve(context.Background(), bytes.NewReader(withoutAnswers(transcript))); err != nil {
			t.Fatal(err)
		}
	})
}

// withoutAnswers drops the responses (an id, no method) from a transcript.
func withoutAnswers(transcript []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(transcript, []byte("\n")) {
		var m wireMessage
		if json.Unmarshal(line, &m) == nil && m.Method == "" && len(m.ID) > 0 {
			continue
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

// FuzzLines feeds any output to the reading side of the driver: it never panics or hangs, and
// every request it answers is answered once.
func FuzzLines(f *testing.F) {
	files, _ := filepath.Glob("testdata/transcripts/*.jsonl")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		s := newSession(enginetest.NewHost(), "/work", slog.New(slog.DiscardHandler))
		s.ended, s.steer = func() {}, func(context.Context, string) error { return nil }
		c := newConn(io.Discard, s)
		_ = c.serve(context.Background(), bytes.NewReader(out))
	})
}

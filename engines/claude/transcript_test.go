package claude

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

// TestTranscripts replays what the real Claude Code printed in recorded runs (testdata/transcripts,
// recorded by the real-CLI tests with ENSEMBLE_RECORD_TRANSCRIPTS) and checks the events the
// driver reads from it against their golden files. The answers to Ensemble's own requests are left
// out: nothing waits for them in a replay.
func TestTranscripts(t *testing.T) {
	enginetest.GoldenTranscripts(t, "testdata/transcripts", func(t *testing.T, transcript []byte, h *enginetest.Host) {
		s := newSession(h, "/work", slog.New(slog.DiscardHandler))
		s.judgeAll, s.ended = true, func() {}
		c := newConn(io.Discard, s)
		if err := c.serve(context.Background(), bytes.NewReader(withoutAnswers(transcript))); err != nil {
			t.Fatal(err)
		}
	})
}

// withoutAnswers drops the control responses from a transcript.
func withoutAnswers(transcript []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(transcript, []byte("\n")) {
		var env struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &env) == nil && env.Type == "control_response" {
			continue
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

// FuzzLines feeds any output to the reading side of the driver: it never panics or hangs, and
// every control request it answers is answered once.
func FuzzLines(f *testing.F) {
	seedTranscripts(f, "testdata/transcripts")
	f.Fuzz(func(t *testing.T, out []byte) {
		h := enginetest.NewHost()
		s := newSession(h, "/work", slog.New(slog.DiscardHandler))
		s.judgeAll, s.ended = true, func() {}
		c := newConn(io.Discard, s)
		_ = c.serve(context.Background(), bytes.NewReader(out))
	})
}

// seedTranscripts adds each line of the recorded transcripts, and each transcript whole, as seeds.
func seedTranscripts(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
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
}

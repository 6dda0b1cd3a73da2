package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
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

package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestTranscripts replays what the real OpenCode printed in recorded runs (testdata/transcripts,
// recorded by the real-CLI tests with ENSEMBLE_RECORD_TRANSCRIPTS) through the ACP client, and
// checks the events it reads against their golden files. The replay stands in for the agent: each
// request the client sends is answered by the recorded lines up to the recorded answer to it.
func TestTranscripts(t *testing.T) {
	p, _ := ProfileNamed("opencode")
	enginetest.GoldenTranscripts(t, "testdata/transcripts", func(t *testing.T, transcript []byte, h *enginetest.Host) {
		toAgentR, toAgentW := io.Pipe()
		fromAgentR, fromAgentW := io.Pipe()
		go replayAgent(t, transcript, toAgentR, fromAgentW)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		spec := engines.Spec{Folder: "/work", Prompt: "replayed"}
		if _, err := Serve(ctx, p, spec, h, toAgentW, fromAgentR, slog.New(slog.DiscardHandler)); err != nil && ctx.Err() != nil {
			t.Fatalf("the replay did not end: %v", err)
		}
		toAgentW.Close()
		fromAgentR.Close()
	})
}

// replayAgent plays the agent of a transcript: for each request the client sends (in), it writes
// the recorded lines (out) up to and including the recorded answer to that request's id; the
// client's own answers are read and let go. It ends the output once the transcript is played.
func replayAgent(t *testing.T, transcript []byte, in io.Reader, out io.WriteCloser) {
	defer out.Close()
	lines := bytes.Split(bytes.TrimSpace(transcript), []byte("\n"))
	next := 0
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() && next < len(lines) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.Method == "" || len(req.ID) == 0 {
			continue // a notification, or the client's answer to a recorded request
		}
		for next < len(lines) {
			line := lines[next]
			next++
			if _, err := out.Write(append(line, '\n')); err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) == nil && m.Method == "" && bytes.Equal(m.ID, req.ID) {
				break // the answer to this request
			}
		}
	}
}

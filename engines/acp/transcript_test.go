package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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
// the recorded lines (out) up to and including the recorded answer to that request's id. A
// recorded request of the agent's waits for the client's answer before the lines after it, as the
// agent waited. It ends the output once the client has ended its input.
func replayAgent(t *testing.T, transcript []byte, in io.Reader, out io.WriteCloser) {
	defer out.Close()
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	requests, answers := make(chan json.RawMessage, 64), make(chan json.RawMessage, 64)
	go func() { // the client's lines: its requests, and its answers to the agent's
		defer close(requests)
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m msg
			switch {
			case json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0:
			case m.Method != "":
				requests <- m.ID
			default:
				answers <- m.ID
			}
		}
	}()
	lines := bytes.Split(bytes.TrimSpace(transcript), []byte("\n"))
	next := 0
	for id := range requests {
		for next < len(lines) {
			line := lines[next]
			next++
			if _, err := out.Write(append(line, '\n')); err != nil {
				return
			}
			var m msg
			if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
				continue
			}
			if m.Method != "" { // the agent's request: it waited for the answer
				for a := range answers {
					if bytes.Equal(a, m.ID) {
						break
					}
				}
				continue
			}
			if bytes.Equal(m.ID, id) {
				break // the answer to this request
			}
		}
	}
	// Every line played: the output stays open until the client is done, as the agent's did.
}

// FuzzServe feeds any output as the agent's to the ACP client: it never panics, and ends when the
// output does.
func FuzzServe(f *testing.F) {
	files, _ := filepath.Glob("testdata/transcripts/*.jsonl")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line) // lines, not whole runs: a whole run waits out its turn's end at each seed
		}
	}
	p, _ := ProfileNamed("opencode")
	f.Fuzz(func(t *testing.T, out []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = Serve(ctx, p, engines.Spec{Folder: "/work", Prompt: "fuzz"}, enginetest.NewHost(), io.Discard, bytes.NewReader(out), slog.New(slog.DiscardHandler))
		if ctx.Err() != nil {
			t.Fatalf("Serve did not end with the agent's output")
		}
	})
}

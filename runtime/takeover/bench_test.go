package takeover

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/terminal"
)

// BenchmarkTerminalFrame is one live-view frame of a full, coloured 120×32 screen: read off the
// terminal's screen as runs of cells, encoded as JSON and sealed for the page (spec 002 §8.17).
// At most 10 are sent a second; this is what each costs the runtime.
func BenchmarkTerminalFrame(b *testing.B) {
	if _, err := exec.LookPath("bash"); err != nil {
		b.Skip("no bash")
	}
	terms := terminal.New(terminal.Options{Home: b.TempDir()})
	defer terms.Close()
	sess, err := terms.Start(terminal.StartOptions{Folder: b.TempDir(), Cols: 120, Rows: 32, Shell: "bash", Args: []string{"--norc", "--noprofile", "-c",
		`for i in $(seq 1 40); do printf '\e[3%dm%03d %s \e[1m%s\e[0m\n' $((i%8)) $i "$(printf 'word%.0s ' {1..16})"; done; sleep 60`}})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	sess.Settle(context.Background(), 0, 200*time.Millisecond, 5*time.Second)
	if !strings.Contains(sess.Text(), "040") {
		b.Fatalf("the screen is not full:\n%s", sess.Text())
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	ch, err := RuntimeChannel(secret, "tk_bench")
	if err != nil {
		b.Fatal(err)
	}
	var size int
	b.ReportAllocs()
	seq := 0
	for b.Loop() {
		seq++
		raw, err := json.Marshal(NewTerminalFrame(sess.Frame(nil), seq, "watch"))
		if err != nil {
			b.Fatal(err)
		}
		size = len(ch.Seal(raw))
	}
	b.ReportMetric(float64(size), "bytes/frame")
}

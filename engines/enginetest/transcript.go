package enginetest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// EnvRecord names a folder the real-CLI tests write their agents' transcripts into (one file a
// run: every line the agent printed), for the golden transcript tests to replay.
const EnvRecord = "ENSEMBLE_RECORD_TRANSCRIPTS"

// Recorder is where a real-CLI test's run writes its agent's transcript: a file named for the test
// in $ENSEMBLE_RECORD_TRANSCRIPTS, or nil when nothing is being recorded.
func Recorder(t testing.TB) io.Writer {
	dir := os.Getenv(EnvRecord)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	name := base + ".jsonl"
	for i := 2; ; i++ { // a test that runs its agent more than once keeps each run
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			break
		}
		name = fmt.Sprintf("%s-%d.jsonl", base, i)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// UpdateGolden rewrites the golden files of the transcript tests instead of comparing them.
var UpdateGolden = flag.Bool("update", false, "rewrite the golden event files from the transcripts")

// GoldenTranscripts replays each transcript in dir (*.jsonl: what an agent printed) through
// replay, which feeds it to the driver's reading side with host, and compares the events host
// got with the transcript's golden file (*.events.json), or writes that file with -update. A
// change to how a driver reads its agent shows as a changed event here.
func GoldenTranscripts(t *testing.T, dir string, replay func(t *testing.T, transcript []byte, host *Host)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in %s (record them with %s=%s and the real-CLI tests)", dir, EnvRecord, dir)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".jsonl"), func(t *testing.T) {
			transcript, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h := NewHost()
			replay(t, transcript, h)
			got := goldenEvents(t, h.Events())
			golden := strings.TrimSuffix(f, ".jsonl") + ".events.json"
			if *UpdateGolden {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (write it with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the events read from %s changed:\n got %s\nwant %s", filepath.Base(f), got, want)
			}
		})
	}
}

// goldenEvents are events as a golden file keeps them: without their times.
func goldenEvents(t *testing.T, evs []engines.Event) []byte {
	t.Helper()
	for i := range evs {
		evs[i].At = time.Time{}
	}
	b, err := json.MarshalIndent(evs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

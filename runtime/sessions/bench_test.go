package sessions

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

var benchWords = func() []string {
	syl := []string{"ran", "ki", "sto", "re", "la", "mon", "ter", "vi", "da", "pol", "sen", "tu", "gra", "fe", "lin", "co"}
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, 800)
	for i := range out {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		out[i] = b.String() + []string{"", "s", "ing", "ed", "er"}[r.IntN(5)]
	}
	return out
}()

func benchText(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		// Zipf-like: a few words are everywhere, most are rare.
		ws[i] = benchWords[int(float64(len(benchWords))*r.Float64()*r.Float64()*r.Float64())]
	}
	if r.IntN(4) == 0 {
		ws = append(ws, fmt.Sprintf("runtime/%s/%s.go", ws[0], ws[1]), fmt.Sprintf("#%d", r.IntN(500)))
	}
	return strings.Join(ws, " ")
}

// benchStore is a database with 2,000 tasks and 20 idle sessions of three runs each.
func benchStore(b *testing.B) (*Service, string) {
	dir := b.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
	if err != nil {
		b.Fatal(err)
	}
	bus := events.NewBus()
	b.Cleanup(func() { bus.Close(); st.Close() })
	w := ledger.New(st, bus)
	r := rand.New(rand.NewPCG(3, 4))
	now := time.Now().UTC()
	stamp := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	err = w.Exec(context.Background(), func(t *ledger.Tx) error {
		ctx := t.Context()
		for i := range 2000 {
			_, err := t.ExecContext(ctx, `INSERT INTO tasks (id, space_id, title, status, labels, page, created_at, updated_at)
				VALUES (?, 'spc_personal', ?, 'in_progress', '[]', ?, ?, ?)`, fmt.Sprintf("tsk_%04d", i),
				benchText(r, 6+r.IntN(5)), benchText(r, 40+r.IntN(80)), stamp(now.Add(-time.Duration(i)*time.Minute)),
				stamp(now.Add(-time.Duration(i)*time.Minute)))
			if err != nil {
				return err
			}
		}
		for s := range 20 {
			prev := ""
			for k := range 3 {
				id := fmt.Sprintf("job_%02d_%d", s, k)
				at := stamp(now.Add(-time.Duration(60*s+10*(3-k)) * time.Minute))
				_, err := t.ExecContext(ctx, `INSERT INTO jobs (id, task_id, agent, brief, status, folder_kind, folder, work_dir,
					resource_key, session_id, continues, summary, changes, created_at, ended_at, updated_at)
					VALUES (?, ?, 'fake', ?, 'done', 'folder', ?, ?, ?, ?, ?, ?, '[{"path":"runtime/x/y.go"}]', ?, ?, ?)`,
					id, fmt.Sprintf("tsk_%04d", s*3+k), benchText(r, 200), dir, dir, dir, fmt.Sprintf("sess-%d", s), prev,
					benchText(r, 120), at, at, at)
				if err != nil {
					return err
				}
				if _, err := t.ExecContext(ctx, `INSERT INTO job_settings (job_id, mode, outside, git) VALUES (?, 'ask', 'none', 'local')`, id); err != nil {
					return err
				}
				prev = id
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return New(Options{Store: st, Writer: w}), dir
}

// BenchmarkChoose is one decision among 20 candidate sessions over a 2,000-task corpus, read from
// SQLite, with the rarity table cached as it is between decisions (budget: < 10 ms).
func BenchmarkChoose(b *testing.B) {
	ss, dir := benchStore(b)
	r := rand.New(rand.NewPCG(5, 6))
	in := jobs.ChoiceInput{Agent: "fake", Folder: dir, Title: benchText(r, 8), Brief: benchText(r, 100)}
	if _, err := ss.Choose(context.Background(), in); err != nil {
		b.Fatal(err)
	}
	w, _ := ss.load(context.Background())
	if n := len(w.candidates(ss.Config(), "fake", dir, newTask{}, time.Now())); n != 20 {
		b.Fatalf("%d candidates", n)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := ss.Choose(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChooseColdCorpus also builds the rarity table of 2,000 tasks, as the first decision in
// an hour does.
func BenchmarkChooseColdCorpus(b *testing.B) {
	ss, dir := benchStore(b)
	r := rand.New(rand.NewPCG(5, 6))
	in := jobs.ChoiceInput{Agent: "fake", Folder: dir, Title: benchText(r, 8), Brief: benchText(r, 100)}
	for b.Loop() {
		ss.corpus.invalidate()
		if _, err := ss.Choose(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

package events

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/store"
)

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		kinds, subject string
		want           string // the filter printed; "error" when refused
	}{
		{"", "", "{[] }"},
		{"run.,task.created", "", "{[run. task.created] }"},
		{" run. , ,needs.", "job_1", "{[run. needs.] job_1}"},
		{"run.tool_start,reset", "", "{[run.tool_start reset] }"},
		{"run%", "", "error"},
		{"Run.", "", "error"},
		{".", "", "error"},
		{".run", "", "error"},
		{"run..x", "", "error"},
	} {
		f, err := ParseFilter(tc.kinds, tc.subject)
		got := fmt.Sprint(f)
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("ParseFilter(%q, %q) = %s (%v), want %s", tc.kinds, tc.subject, got, err, tc.want)
		}
	}
}

func TestFilterMatch(t *testing.T) {
	ev := Event{Kind: "run.tool_start", Subject: "job_1"}
	for _, tc := range []struct {
		name string
		f    Filter
		want bool
	}{
		{"zero", Filter{}, true},
		{"family", Filter{Kinds: []string{"run."}}, true},
		{"other family", Filter{Kinds: []string{"task."}}, false},
		{"family is not a prefix of a word", Filter{Kinds: []string{"ru."}}, false},
		{"kind", Filter{Kinds: []string{"task.created", "run.tool_start"}}, true},
		{"kind is whole", Filter{Kinds: []string{"run.tool"}}, false},
		{"subject", Filter{Kinds: []string{"run."}, Subject: "job_1"}, true},
		{"other subject", Filter{Kinds: []string{"run."}, Subject: "job_2"}, false},
	} {
		if got := tc.f.Match(ev); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSelect: the SQL a filter reads the backlog with selects what Match selects live.
func TestSelect(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := st.Writer()
	var all []Event
	for _, e := range []struct {
		kind    Kind
		subject string
	}{{"run.created", "job_1"}, {"task.created", "tsk_1"}, {"run.ended", "job_2"}, {"run_x.y", "job_1"}, {"runs.x", "job_1"}, {"run.ended", "job_1"}} {
		ev, err := Append(ctx, w, time.Now(), e.kind, e.subject, map[string]string{})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ev)
	}
	for _, f := range []Filter{{}, {Kinds: []string{"run."}}, {Kinds: []string{"run."}, Subject: "job_1"},
		{Kinds: []string{"task.created", "run.ended"}}, {Subject: "tsk_1"}, {Kinds: []string{"run_x.y"}}} {
		got, err := Select(ctx, st.Reader(), f, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, ev := range all {
			if f.Match(ev) {
				want = append(want, ev.Seq)
			}
		}
		var seqs []int64
		for _, ev := range got {
			seqs = append(seqs, ev.Seq)
		}
		if fmt.Sprint(seqs) != fmt.Sprint(want) {
			t.Errorf("Select(%v) = %v, want %v", f, seqs, want)
		}
	}
	if got, _ := Select(ctx, st.Reader(), Filter{}, all[4].Seq, 100); len(got) != 1 || got[0].Seq != all[5].Seq {
		t.Errorf("Select after %d = %v", all[4].Seq, got)
	}
}

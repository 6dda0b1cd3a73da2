package needs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/problem"
)

var src = Source{RunID: "run_1", Title: "Fix the login retry"}

func TestPrepare(t *testing.T) {
	long := strings.Repeat("x", maxText+1)
	for _, tc := range []struct {
		name    string
		d       Decision
		wantErr string // a part of the sentence; "" for none
		check   func(t *testing.T, d Decision)
	}{
		{name: "permission recommends refuse",
			d: NewPermission(src, "npm install left-pad", judge.Touches{Programs: []string{"npm"}}, "It reaches the internet."),
			check: func(t *testing.T, d Decision) {
				if d.Recommended != Refuse || len(d.Options) != 3 || d.FreeText {
					t.Errorf("got recommended %d, options %v, free text %v", d.Recommended, d.Options, d.FreeText)
				}
			}},
		{name: "permission built by hand still recommends refuse",
			d: Decision{Kind: Permission, Call: "rm -rf build", Options: []string{"Yes"}, FreeText: true},
			check: func(t *testing.T, d Decision) {
				if d.Recommended != Refuse || d.Options[0] != "Allow once" || d.FreeText {
					t.Errorf("got recommended %d, options %v, free text %v", d.Recommended, d.Options, d.FreeText)
				}
			}},
		{name: "permission recommendation chosen",
			d: NewPermission(src, "go test ./...", judge.Touches{}, "").Recommend(AllowOnce, "It only runs the tests."),
			check: func(t *testing.T, d Decision) {
				if d.Recommended != AllowOnce || d.Why != "It only runs the tests." {
					t.Errorf("recommended %d because %q, want %d because it only runs the tests", d.Recommended, d.Why, AllowOnce)
				}
			}},
		{name: "why too long", d: NewPermission(src, "ls", judge.Touches{}, "").Recommend(AllowOnce, strings.Repeat("w", 501)), wantErr: "keep it under 500"},
		{name: "no why without a recommendation",
			d: Decision{Kind: Question, Question: "Name?", FreeText: true, Recommended: NoRecommendation, Why: "no reason"},
			check: func(t *testing.T, d Decision) {
				if d.Why != "" {
					t.Errorf("why %q on a question that recommends nothing", d.Why)
				}
			}},
		{name: "permission without call", d: NewPermission(src, "  ", judge.Touches{}, ""), wantErr: "needs the tool call"},
		{name: "permission call too long", d: NewPermission(src, long, judge.Touches{}, ""), wantErr: "keep it under"},
		{name: "permission recommendation out of range", d: NewPermission(src, "ls", judge.Touches{}, "").Recommend(3, ""), wantErr: "not one of the 3 options"},
		{name: "question trimmed",
			d: NewQuestion(src, "  Which database?  ", []string{" SQLite ", "Postgres"}, 0, false),
			check: func(t *testing.T, d Decision) {
				if d.Question != "Which database?" || d.Options[0] != "SQLite" || d.Status != Open {
					t.Errorf("got %q %q %s", d.Question, d.Options, d.Status)
				}
			}},
		{name: "free text only", d: NewQuestion(src, "Branch name?", nil, 0, true),
			check: func(t *testing.T, d Decision) {
				if d.Recommended != NoRecommendation {
					t.Errorf("recommended %d, want none", d.Recommended)
				}
			}},
		{name: "question without text", d: NewQuestion(src, "", []string{"a"}, 0, false), wantErr: "needs its text"},
		{name: "no options no free text", d: NewQuestion(src, "Well?", nil, NoRecommendation, false), wantErr: "needs options"},
		{name: "empty option", d: NewQuestion(src, "Well?", []string{"a", " "}, 0, false), wantErr: "Option 1 is empty"},
		{name: "same options", d: NewQuestion(src, "Well?", []string{"Yes", "yes"}, 0, false), wantErr: "are the same"},
		{name: "number option", d: NewQuestion(src, "How many?", []string{"2", "3"}, 0, false), wantErr: "only a number"},
		{name: "recommended out of range", d: NewQuestion(src, "Well?", []string{"a", "b"}, 2, false), wantErr: "not one of the 2 options"},
		{name: "no recommendation among options", d: NewQuestion(src, "Well?", []string{"a", "b"}, NoRecommendation, false),
			check: func(t *testing.T, d Decision) {
				if d.Recommended != NoRecommendation || len(d.Options) != 2 {
					t.Errorf("got recommended %d, options %v", d.Recommended, d.Options)
				}
			}},
		{name: "recommended negative", d: NewQuestion(src, "Well?", []string{"a"}, -2, false), wantErr: "not one of"},
		{name: "too many options", d: NewQuestion(src, "Well?", manyOptions(maxOptions+1), 0, false), wantErr: "at most 20"},
		{name: "unknown kind", d: Decision{Kind: "poll", Question: "?"}, wantErr: "Unknown kind"},
		{name: "title too long", d: NewQuestion(Source{Title: strings.Repeat("t", maxTitle+1)}, "?", []string{"a"}, 0, false), wantErr: "title"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := prepare(tc.d)
			if tc.wantErr != "" {
				if !problem.Is(err, problem.KindInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an invalid problem containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}

func manyOptions(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "option " + strings.Repeat("i", i+1)
	}
	return out
}

func TestPermissionOptionsAreNotShared(t *testing.T) {
	d, _ := prepare(NewPermission(src, "ls", judge.Touches{}, ""))
	d.Options[0] = "changed"
	if PermissionOptions[0] != "Allow once" {
		t.Fatal("a decision's options alias PermissionOptions")
	}
}

func TestResolve(t *testing.T) {
	perm, _ := prepare(NewPermission(src, "curl example.com", judge.Touches{Hosts: []string{"example.com"}}, "It fetches."))
	q, _ := prepare(NewQuestion(src, "Which?", []string{"Keep it", "Drop it"}, 0, false))
	free, _ := prepare(NewQuestion(src, "Which?", []string{"Keep it", "Drop it"}, 1, true))
	textOnly, _ := prepare(NewQuestion(src, "Name?", nil, 0, true))
	for _, tc := range []struct {
		name    string
		d       Decision
		a       Answer
		want    Answer
		wantErr string
	}{
		{"permission option", perm, Choose(AllowForRun), Answer{AllowForRun, "Allow for this run"}, ""},
		{"permission by label", perm, Say("refuse"), Answer{Refuse, "Refuse"}, ""},
		{"permission free text", perm, Say("only on Tuesdays"), Answer{}, "takes one of its options, not free text: 0 “Allow once”"},
		{"option out of range", perm, Choose(3), Answer{}, "choose a number from 0 to 2"},
		{"option negative", perm, Answer{Option: -2}, Answer{}, "numbered from 0"},
		{"question option ignores text", q, Answer{Option: 1, Text: "whatever"}, Answer{1, "Drop it"}, ""},
		{"question label with spaces", q, Say("  keep IT "), Answer{0, "Keep it"}, ""},
		{"question free text refused", q, Say("Both"), Answer{}, "not free text"},
		{"free text", free, Say(" Both, in turn "), Answer{FreeText, "Both, in turn"}, ""},
		{"free text empty", free, Say("   "), Answer{}, "answer is empty"},
		{"free text too long", free, Say(strings.Repeat("y", maxText+1)), Answer{}, "keep it under"},
		{"text only, option", textOnly, Choose(0), Answer{}, "no options"},
		{"text only, text", textOnly, Say("main"), Answer{FreeText, "main"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.d.resolve(tc.a)
			if tc.wantErr != "" {
				if !problem.Is(err, problem.KindInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an invalid problem containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestUnattendedAnswer(t *testing.T) {
	perm, _ := prepare(NewPermission(src, "ls", judge.Touches{}, ""))
	q, _ := prepare(NewQuestion(src, "Which?", []string{"a", "b"}, 1, false))
	textOnly, _ := prepare(NewQuestion(src, "Name?", nil, 0, true))
	for _, tc := range []struct {
		name string
		d    Decision
		want Answer
	}{
		{"permission refuses", perm, Answer{Refuse, "Refuse"}},
		{"question takes the recommended", q, Answer{1, "b"}},
		{"free text only", textOnly, Answer{FreeText, unattendedText}},
	} {
		if got := tc.d.unattended(); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestSettledSentence(t *testing.T) {
	at := time.Date(2026, 5, 4, 14, 3, 9, 0, time.UTC)
	ans := func(by string, a Answer) Decision {
		return Decision{Status: Answered, AnsweredBy: by, AnsweredAt: &at, Answer: &a}
	}
	for _, tc := range []struct {
		name string
		d    Decision
		want string
	}{
		{"browser", ans(ByBrowser, Answer{0, "Allow once"}), "Already answered by you in the browser at 14:03:09 on 4 May 2026: “Allow once”."},
		{"command line", ans(ByCommandLine, Answer{FreeText, "use main"}), "Already answered by you at the command line at 14:03:09 on 4 May 2026: “use main”."},
		{"unattended", ans(ByUnattended, Answer{2, "Refuse"}), "Already answered at 14:03:09 on 4 May 2026: “Refuse”, the recommended option, because the run is unattended."},
		{"other client", ans("phone", Answer{1, "b"}), "Already answered by phone at 14:03:09 on 4 May 2026: “b”."},
		{"withdrawn", Decision{Status: Withdrawn, ClosedAt: &at}, "Already withdrawn at 14:03:09 on 4 May 2026: its run ended, so no one waits for the answer."},
		{"expired", Decision{Status: Expired, ClosedAt: &at}, "Already expired at 14:03:09 on 4 May 2026: no one waits for the answer any more."},
		{"no time", Decision{Status: Expired}, "Already expired at an unknown time: no one waits for the answer any more."},
	} {
		if got := settledSentence(tc.d, time.UTC); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	err := error(&SettledError{Decision: ans(ByBrowser, Answer{0, "x"})})
	if !errors.Is(err, ErrSettled) {
		t.Error("SettledError does not match ErrSettled")
	}
}

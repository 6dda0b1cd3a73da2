package sessions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func fill(f float64) *float64 { return &f }

func TestScoreEachSignal(t *testing.T) {
	c := DefaultConfig()
	for _, tc := range []struct {
		name    string
		sig     Signals
		want    float64
		tooFull bool
	}{
		{"nothing", Signals{}, 0, false},
		{"link", Signals{Link: true}, 10, false},
		{"deliverable", Signals{Deliverable: true}, 3, false},
		{"meeting", Signals{Meeting: true}, 3, false},
		{"parent page", Signals{ParentPage: true}, 2, false},
		{"one anchor", Signals{Anchors: []string{"code:rankResults"}}, 3, false},
		{"anchors stop at 6", Signals{Anchors: []string{"a", "b", "c", "d"}}, 6, false},
		{"topic", Signals{Topic: 0.5}, 3, false},
		{"topic at most 1", Signals{Topic: 1.7}, 6, false},
		{"follow-up", Signals{FollowUp: true}, 1, false},
		{"new work", Signals{NewWork: true}, -1, false},
		{"new work tied by a link", Signals{NewWork: true, Link: true}, 10, false},
		{"new work tied by an anchor", Signals{NewWork: true, Anchors: []string{"a"}}, 3, false},
		{"warm", Signals{Warm: true}, 1, false},
		{"filling past 40%", Signals{Fill: fill(0.41)}, -2, false},
		{"at 40% is not filling", Signals{Fill: fill(0.40)}, 0, false},
		{"too full past 70%", Signals{Fill: fill(0.71)}, -2, true},
		{"unknown fill, 8 tasks", Signals{Tasks: 8}, 0, false},
		{"unknown fill, 9 tasks", Signals{Tasks: 9}, -2, false},
		{"unknown fill, 15 tasks", Signals{Tasks: 15}, -2, false},
		{"unknown fill, 16 tasks: too full", Signals{Tasks: 16}, -2, true},
		{"known fill ignores the task count", Signals{Tasks: 30, Fill: fill(0.1)}, 0, false},
		{"all together", Signals{Link: true, Anchors: []string{"a"}, Topic: 0.5, Warm: true, FollowUp: true}, 18, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, parts, full := Score(c, tc.sig)
			if got != tc.want || full != tc.tooFull {
				t.Errorf("Score = %v (too full %v), want %v (%v); parts %v", got, full, tc.want, tc.tooFull, parts)
			}
			sum := 0.0
			for _, p := range parts {
				sum += p
			}
			if sum != got {
				t.Errorf("parts %v add up to %v, not %v", parts, sum, got)
			}
		})
	}
}

func TestDecideBands(t *testing.T) {
	c := DefaultConfig()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cand := func(id string, age time.Duration, s Signals) Candidate {
		return Candidate{Session: id, LastRun: id + "-last", LastActive: now.Add(-age), Signals: s}
	}
	for _, tc := range []struct {
		name     string
		cands    []Candidate
		cont     bool
		band     Band
		best     string
		note     string
		inReason string
	}{
		{"no candidates", nil, false, NoBand, "", "", "no session"},
		{"confident at exactly 6", []Candidate{cand("a", time.Hour, Signals{Anchors: []string{"code:x", "file:y.go"}})}, true, Confident, "a", "", "both name x, y.go"},
		{"link is confident", []Candidate{cand("a", time.Hour, Signals{Link: true, LinkedTitle: "Build the ranking API"})}, true, Confident, "a", "", "“Build the ranking API”"},
		{"unsure at 3", []Candidate{cand("a", time.Hour, Signals{Deliverable: true})}, false, Unsure, "a", "", "best score 3.0"},
		{"unsure just below 6", []Candidate{cand("a", time.Hour, Signals{Anchors: []string{"x"}, Topic: 0.49})}, false, Unsure, "a", "", ""},
		{"low below 3", []Candidate{cand("a", time.Hour, Signals{ParentPage: true})}, false, Low, "a", "", ""},
		{"negative is low", []Candidate{cand("a", time.Hour, Signals{NewWork: true})}, false, Low, "a", "", ""},
		{"the best wins", []Candidate{cand("a", time.Hour, Signals{Anchors: []string{"x", "y"}}), cand("b", 2*time.Hour, Signals{Link: true})}, true, Confident, "b", "", ""},
		{"ties go to the most recent", []Candidate{cand("old", 3*time.Hour, Signals{Link: true}), cand("new", time.Hour, Signals{Link: true})}, true, Confident, "new", "", ""},
		{"too full: a new session", []Candidate{cand("a", time.Hour, Signals{Link: true, Tasks: 16})}, false, Confident, "a", "too-full", "too full"},
		{"too full: the next confident one", []Candidate{cand("a", time.Hour, Signals{Link: true, Fill: fill(0.9)}), cand("b", time.Hour, Signals{Anchors: []string{"x", "y"}})}, true, Confident, "b", "", ""},
		{"too full: the next is not confident", []Candidate{cand("a", time.Hour, Signals{Link: true, Fill: fill(0.9)}), cand("b", time.Hour, Signals{Anchors: []string{"x"}})}, false, Confident, "a", "too-full", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(c, tc.cands)
			best := ""
			if d.Best != nil {
				best = d.Best.Session
			}
			if d.Continue != tc.cont || d.Band != tc.band || best != tc.best || d.Note != tc.note {
				t.Errorf("got continue %v band %s best %q note %q, want %v %s %q %q", d.Continue, d.Band, best, d.Note, tc.cont, tc.band, tc.best, tc.note)
			}
			if !strings.Contains(d.Reason, tc.inReason) {
				t.Errorf("reason %q does not say %q", d.Reason, tc.inReason)
			}
			if len(d.Ranked) != len(tc.cands) {
				t.Errorf("ranked %d of %d", len(d.Ranked), len(tc.cands))
			}
		})
	}
}

// Stored signals scored again under other weights: calibration needs no text.
func TestRescoreStoredSignals(t *testing.T) {
	sig := Signals{Anchors: []string{"code:rankResults"}, Topic: 0.4}
	c := DefaultConfig()
	if d := Decide(c, []Candidate{{Session: "a", Signals: sig}}); d.Continue {
		t.Fatalf("6 is not reached with the defaults: %+v", d.Ranked[0])
	}
	patched, err := parseConfig([]byte(`{"version": "2", "weights": {"topic": 8}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := Decide(patched, []Candidate{{Session: "a", Signals: sig}}); !d.Continue || d.Best.Score != 6.2 {
		t.Fatalf("under the patch: %+v", d)
	}
}

func TestConfigPatch(t *testing.T) {
	for _, tc := range []struct {
		name, patch, err string
	}{
		{"weights", `{"version": "x.1", "weights": {"topic": 8}}`, ""},
		{"unknown field", `{"version": "x.1", "weight": {}}`, "unknown field"},
		{"not json", `{`, "not a valid patch"},
		{"bands the wrong way", `{"bands": {"confident": 2, "unsure": 3}}`, "bands.confident is below bands.unsure"},
		{"no version", `{"version": ""}`, "no version"},
		{"hard below soft", `{"size": {"soft": 0.8, "hard": 0.7}}`, "soft at most hard"},
		{"zero candidates", `{"limits": {"candidates": 0}}`, "limits.candidates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig([]byte(tc.patch))
			if tc.err == "" {
				if err != nil || c.Weights.Topic != 8 || c.Weights.Link != 10 {
					t.Fatalf("got %v %+v", err, c.Weights)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
			if c.Hash() != DefaultConfig().Hash() {
				t.Error("a bad patch must leave the defaults")
			}
		})
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	var warned []string
	f := &configFile{path: filepath.Join(dir, ConfigFile), warn: func(msg string, _ ...any) { warned = append(warned, msg) }}
	now := time.Now()
	if c := f.get(now); c.Hash() != DefaultConfig().Hash() {
		t.Fatal("no file: the defaults")
	}
	os.WriteFile(f.path, []byte(`{"version": "v2", "bands": {"confident": 7}}`), 0o600)
	if c := f.get(now.Add(2 * time.Second)); c.Bands.Confident != 7 || c.Version != "v2" {
		t.Fatalf("patched: %+v", c.Bands)
	}
	os.WriteFile(f.path, []byte(`{"bands": {"confident": "high"}}`), 0o600)
	os.Chtimes(f.path, now.Add(time.Minute), now.Add(time.Minute))
	if c := f.get(now.Add(4 * time.Second)); c.Bands.Confident != 6 {
		t.Fatalf("bad file: the defaults, got %+v", c.Bands)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "uses its defaults") || strings.Count(warned[0], ".") < 1 {
		t.Fatalf("warned %q", warned)
	}
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"ranking": "rank", "ranked": "rank", "ranks": "rank", "caresses": "caress", "ponies": "poni",
		"agreed": "agre", "hopping": "hop", "filing": "file", "happy": "happi", "relational": "relat",
		"conditional": "condit", "generalization": "gener", "hopefulness": "hope", "electrical": "electr",
		"adjustment": "adjust", "controlling": "control", "sessions": "session", "session": "session",
		"retrieval": "retriev", "go": "go", "api": "api", "probate": "probat", "rate": "rate", "cease": "ceas",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnchors(t *testing.T) {
	ubiq := setOf(DefaultConfig().Text.Ubiquitous)
	got := map[string]bool{}
	anchorsOf("Fix rankResults in runtime/search/rank.go and auth_session (see #123, ABC-42, https://example.com/x?a=1). Also package.json, v1.2 and e.g.", ubiq, got)
	var list []string
	for a := range got {
		list = append(list, a)
	}
	slices.Sort(list)
	want := []string{"code:auth_session", "code:rankResults", "file:runtime/search/rank.go", "issue:#123", "issue:ABC-42", "url:https://example.com/x?a=1"}
	if !slices.Equal(list, want) {
		t.Errorf("anchors %q\nwant    %q", list, want)
	}
	shared := sharedAnchors(map[string]bool{"file:rank.go": true, "file:runtime/search/rank.go": true, "code:x": true},
		map[string]bool{"file:runtime/search/rank.go": true})
	if !slices.Equal(shared, []string{"file:runtime/search/rank.go"}) {
		t.Errorf("a file shared by its path is not counted again by its name: %q", shared)
	}
	if got := commonAcross([][]string{{"a", "b"}, {"a"}, {"c"}}); !got["a"] || got["b"] {
		t.Errorf("shared with more than half: %v", got)
	}
}

func TestTopic(t *testing.T) {
	cfg := DefaultConfig()
	var docs []corpusDoc
	for i := range 60 {
		docs = append(docs, corpusDoc{title: "Chore number " + string(rune('a'+i%26)) + " for the team"})
	}
	docs = append(docs, corpusDoc{title: "Ranking search results by freshness"}, corpusDoc{title: "Billing invoices export"})
	corp := buildCorpus(docs, cfg)
	vec := func(title string) map[string]float64 {
		m := map[string]float64{}
		addTerms(m, title, 3, nil)
		return corp.vector(m)
	}
	same := corp.topic(vec("Rank the search results by freshness"), vec("Ranking search results by freshness"), cfg)
	other := corp.topic(vec("Rank the search results by freshness"), vec("Billing invoices export"), cfg)
	one := corp.topic(vec("search"), vec("Ranking search results"), cfg)
	if same < 0.8 || other != 0 || one != 0 {
		t.Errorf("topic: same %v, other %v, one shared term %v", same, other, one)
	}
	small := buildCorpus(docs[60:], cfg)
	if s := small.topic(vec("Rank the search results by freshness"), vec("Ranking search results by freshness"), cfg); s > 2.0/50 {
		t.Errorf("a corpus of 2 tasks counts 2/50 at most: %v", s)
	}
}

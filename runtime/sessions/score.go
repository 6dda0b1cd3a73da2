package sessions

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Signals are what a candidate session has in common with a new task. They are stored with each
// decision, so a decision can be scored again under other weights without any text.
type Signals struct {
	Link        bool     `json:"link"`                  // the task names a task of the session
	LinkedTitle string   `json:"linkedTitle,omitempty"` // that task's title, for the reason
	Deliverable bool     `json:"deliverable"`           // the same deliverable as a task of the session
	Meeting     bool     `json:"meeting"`               // the same meeting
	ParentPage  bool     `json:"parentPage"`            // the same parent page
	Anchors     []string `json:"anchors"`               // exact things both name, after the common ones are dropped
	Topic       float64  `json:"topic"`                 // 0–1: the TF-IDF cosine, scaled for a small corpus
	FollowUp    bool     `json:"followUp"`              // the task's title or labels say it continues work
	NewWork     bool     `json:"newWork"`               // the task's title says it starts something new
	Warm        bool     `json:"warm"`                  // active within the warm minutes
	Fill        *float64 `json:"fill"`                  // the share of its context window it uses; nil unknown
	Tasks       int      `json:"tasks"`                 // tasks in the session
}

// Candidate is a session that could continue with a new task.
type Candidate struct {
	Session    string    `json:"session"` // its first run
	LastRun    string    `json:"lastRun"` // the run to continue
	LastActive time.Time `json:"lastActive"`
	Signals    Signals   `json:"signals"`
}

// Scored is a candidate with its score, the part each signal gave, and whether it is too full.
type Scored struct {
	Candidate
	Score   float64            `json:"score"`
	Parts   map[string]float64 `json:"parts"`
	TooFull bool               `json:"tooFull,omitempty"`
}

// Band names where the best score fell.
type Band string

const (
	Confident Band = "confident" // at or above bands.confident: continued
	Unsure    Band = "unsure"    // at or above bands.unsure: a new session, recorded as a near miss
	Low       Band = "low"
	NoBand    Band = "none" // no candidates, or not chosen at all
)

// Decision is what to do with a new task.
type Decision struct {
	Continue bool     `json:"continue"`
	Band     Band     `json:"band"`
	Best     *Scored  `json:"best,omitempty"` // the session continued, or the best candidate
	Reason   string   `json:"reason"`
	Note     string   `json:"note,omitempty"` // too-full: the confident best was too full
	Ranked   []Scored `json:"ranked"`         // every candidate, best first
}

// Score is a candidate's score under c: the sum of weight × signal.
func Score(c Config, s Signals) (score float64, parts map[string]float64, tooFull bool) {
	w := c.Weights
	parts = map[string]float64{}
	add := func(name string, v float64) {
		if v != 0 {
			parts[name] = v
			score += v
		}
	}
	if s.Link {
		add("link", w.Link)
	}
	if s.Deliverable {
		add("deliverable", w.Deliverable)
	}
	if s.Meeting {
		add("meeting", w.Meeting)
	}
	if s.ParentPage {
		add("parentPage", w.ParentPage)
	}
	add("anchors", math.Min(w.Anchor*float64(len(s.Anchors)), w.AnchorMax))
	add("topic", w.Topic*math.Max(0, math.Min(1, s.Topic)))
	if s.FollowUp {
		add("followUp", w.FollowUp)
	}
	if s.NewWork && !s.Link && len(s.Anchors) == 0 {
		add("newWork", -w.NewWork)
	}
	if s.Warm {
		add("warm", w.Warm)
	}
	switch {
	case s.Fill != nil:
		if *s.Fill > c.Size.Soft {
			add("fill", -w.Filling)
		}
		tooFull = *s.Fill > c.Size.Hard
	default:
		if s.Tasks > c.Size.LongChainTasks {
			add("fill", -w.LongChain)
		}
		tooFull = s.Tasks > c.Size.HardChainTasks
	}
	return score, parts, tooFull
}

// Decide scores the candidates and picks: the best (ties: the most recently active) at or above
// bands.confident is continued, unless it is too full; otherwise a new session, with its band.
func Decide(c Config, cands []Candidate) Decision {
	ranked := make([]Scored, len(cands))
	for i, cd := range cands {
		sc, parts, full := Score(c, cd.Signals)
		ranked[i] = Scored{Candidate: cd, Score: round2(sc), Parts: parts, TooFull: full}
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		if ranked[i].Score != ranked[j].Score {
			return ranked[i].Score > ranked[j].Score
		}
		if !ranked[i].LastActive.Equal(ranked[j].LastActive) {
			return ranked[i].LastActive.After(ranked[j].LastActive)
		}
		return ranked[i].Session < ranked[j].Session
	})
	d := Decision{Band: NoBand, Ranked: ranked}
	if len(ranked) == 0 {
		d.Reason = "There was no session of this agent to continue."
		return d
	}
	// The best that is not too full, among the confident ones.
	best := &ranked[0]
	switch {
	case best.Score >= c.Bands.Confident:
		d.Band = Confident
		for i := range ranked {
			if ranked[i].Score < c.Bands.Confident {
				break
			}
			if !ranked[i].TooFull {
				d.Continue, d.Best = true, &ranked[i]
				d.Reason = "Continued the agent's session: " + why(ranked[i]) + "."
				return d
			}
		}
		d.Best, d.Note = best, "too-full"
		d.Reason = "A new session: the fitting one (" + why(*best) + ") is too full to take more."
		return d
	case best.Score >= c.Bands.Unsure:
		d.Band = Unsure
	default:
		d.Band = Low
	}
	d.Best = best
	d.Reason = fmt.Sprintf("A new session: no session fitted well enough (best score %.1f).", best.Score)
	return d
}

// why says in words what ties a task to a session, strongest first.
func why(s Scored) string {
	var out []string
	sig := s.Signals
	if sig.Link {
		if sig.LinkedTitle != "" {
			out = append(out, "the task mentions “"+sig.LinkedTitle+"”")
		} else {
			out = append(out, "the task mentions one of its tasks")
		}
	}
	for _, f := range []struct {
		on   bool
		what string
	}{{sig.Deliverable, "the same deliverable"}, {sig.Meeting, "the same meeting"}, {sig.ParentPage, "the same parent page"}} {
		if f.on {
			out = append(out, f.what)
		}
	}
	if n := len(sig.Anchors); n > 0 {
		names := make([]string, 0, min(n, 3))
		for _, a := range sig.Anchors[:min(n, 3)] {
			_, name, _ := strings.Cut(a, ":")
			names = append(names, name)
		}
		out = append(out, "both name "+strings.Join(names, ", "))
	}
	if s.Parts["topic"] >= 1 {
		out = append(out, "it is on the same topic")
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("it scored %.1f", s.Score))
	}
	return strings.Join(out, "; ")
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Config is every number and word list of session choice and clean-up: one versioned set, with
// its defaults in code ([DefaultConfig]) and the person's changes in sessions.json in the data
// folder, a JSON object with only the fields to change, for example
//
//	{"version": "2026-12-01.1", "weights": {"topic": 8}, "bands": {"confident": 7}}
//
// Change version with every change: each decision records the version and a hash of the config.
type Config struct {
	Version string `json:"version"`
	// Enabled lets a run that names no session continue a fitting one.
	Enabled bool    `json:"enabled"`
	Weights Weights `json:"weights"`
	Bands   Bands   `json:"bands"`
	Size    Size    `json:"size"`
	Limits  Limits  `json:"limits"`
	Text    Text    `json:"text"`
	Cleanup Cleanup `json:"cleanup"`
}

// Weights multiply the signals.
type Weights struct {
	Link        float64 `json:"link"`
	Deliverable float64 `json:"deliverable"`
	Meeting     float64 `json:"meeting"`
	ParentPage  float64 `json:"parentPage"`
	Anchor      float64 `json:"anchor"`    // per shared anchor …
	AnchorMax   float64 `json:"anchorMax"` // … up to this
	Topic       float64 `json:"topic"`     // × the topic's cosine (0–1)
	FollowUp    float64 `json:"followUp"`
	NewWork     float64 `json:"newWork"` // subtracted, only when no link or anchor ties the task to the session
	Warm        float64 `json:"warm"`
	Filling     float64 `json:"filling"`   // subtracted past Size.Soft
	LongChain   float64 `json:"longChain"` // subtracted with unknown fill past Size.LongChainTasks
}

// Bands split the best score: continue at Confident or above; below, a new session, recorded as
// unsure (at Unsure or above) or low.
type Bands struct {
	Confident float64 `json:"confident"`
	Unsure    float64 `json:"unsure"`
}

// Size says when a session is filling up (Soft) or too full to continue (Hard), by the share of
// its context window it uses or, when that is unknown, by its number of tasks.
type Size struct {
	Soft           float64 `json:"soft"`
	Hard           float64 `json:"hard"`
	LongChainTasks int     `json:"longChainTasks"`
	HardChainTasks int     `json:"hardChainTasks"`
}

// Limits bound a decision's work.
type Limits struct {
	Candidates        int     `json:"candidates"`        // sessions looked at, newest first
	MaxAgeDays        int     `json:"maxAgeDays"`        // sessions active within, as agents keep them
	CorpusTasks       int     `json:"corpusTasks"`       // the rarity table's tasks, newest first
	CorpusTTLMinutes  int     `json:"corpusTtlMinutes"`  // how long the rarity table is kept
	MinCorpus         int     `json:"minCorpus"`         // below this many tasks, topic counts proportionally less
	TopicMinShared    int     `json:"topicMinShared"`    // uncommon terms two texts must share for topic to count
	AnchorMaxDocShare float64 `json:"anchorMaxDocShare"` // an anchor in more of the tasks than this does not count
	WarmMinutes       int     `json:"warmMinutes"`
	TimeBudgetMs      int     `json:"timeBudgetMs"` // word matching stops after this; links and structure decide alone
}

// Text holds the word lists.
type Text struct {
	ExtraStopwords []string `json:"extraStopwords"`
	FollowUp       []string `json:"followUp"`       // words of a title that continues earlier work
	NewWork        []string `json:"newWork"`        // words of a title that starts something new
	FollowUpLabels []string `json:"followUpLabels"` // labels that continue earlier work
	Ubiquitous     []string `json:"ubiquitous"`     // file names every repository has: never anchors
}

// Cleanup bounds the sweep that deletes sessions whose every task is retired.
type Cleanup struct {
	Enabled        bool `json:"enabled"`
	EveryMinutes   int  `json:"everyMinutes"`
	DeletedMinutes int  `json:"deletedMinutes"` // a task in Trash this long is retired (Undo still finds it before)
	CompletedDays  int  `json:"completedDays"`  // a done or dropped task untouched this long is retired
	InUseHours     int  `json:"inUseHours"`     // a session with a task in use is looked at again after this
	LookAt         int  `json:"lookAt"`         // sessions looked at per sweep
	Delete         int  `json:"delete"`         // sessions deleted per sweep
}

// DefaultConfig is the spec's session choice.
func DefaultConfig() Config {
	return Config{
		Version: "2026-01-01.1",
		Enabled: true,
		Weights: Weights{Link: 10, Deliverable: 3, Meeting: 3, ParentPage: 2, Anchor: 3, AnchorMax: 6, Topic: 6,
			FollowUp: 1, NewWork: 1, Warm: 1, Filling: 2, LongChain: 2},
		Bands: Bands{Confident: 6, Unsure: 3},
		Size:  Size{Soft: 0.4, Hard: 0.7, LongChainTasks: 8, HardChainTasks: 15},
		Limits: Limits{Candidates: 20, MaxAgeDays: 30, CorpusTasks: 2000, CorpusTTLMinutes: 60, MinCorpus: 50,
			TopicMinShared: 2, AnchorMaxDocShare: 0.2, WarmMinutes: 60, TimeBudgetMs: 3000},
		Text: Text{
			ExtraStopwords: []string{"task", "please", "ensemble", "todo"},
			FollowUp: []string{"follow-up", "follow up", "followup", "also", "again", "still", "continue",
				"next step", "then", "as well", "fix up", "tweak", "more"},
			NewWork:        []string{"new", "start", "create", "set up", "setup", "scaffold", "from scratch", "another", "separate"},
			FollowUpLabels: []string{"follow-up", "followup"},
			Ubiquitous: []string{"package.json", "package-lock.json", "readme.md", "index.ts", "index.js", "main.go",
				"go.mod", "go.sum", "makefile", "dockerfile", ".gitignore", "license", "tsconfig.json", "cargo.toml",
				"setup.py", "pyproject.toml", "__init__.py", "main.py", "index.html", "main.rs", "lib.rs"},
		},
		Cleanup: Cleanup{Enabled: true, EveryMinutes: 15, DeletedMinutes: 10, CompletedDays: 7, InUseHours: 6,
			LookAt: 60, Delete: 20},
	}
}

// check says, in one sentence, what is wrong with a config.
func (c Config) check() error {
	switch {
	case c.Version == "":
		return errors.New("it has no version")
	case c.Bands.Confident < c.Bands.Unsure:
		return errors.New("bands.confident is below bands.unsure")
	case c.Size.Soft <= 0 || c.Size.Hard > 1 || c.Size.Soft > c.Size.Hard:
		return errors.New("size.soft and size.hard must be shares of the window, soft at most hard")
	case c.Size.LongChainTasks < 1 || c.Size.HardChainTasks < c.Size.LongChainTasks:
		return errors.New("size.longChainTasks must be at least 1 and at most size.hardChainTasks")
	case c.Limits.Candidates < 1 || c.Limits.Candidates > 200:
		return errors.New("limits.candidates must be from 1 to 200")
	case c.Limits.MaxAgeDays < 1, c.Limits.CorpusTasks < 1, c.Limits.CorpusTTLMinutes < 1, c.Limits.MinCorpus < 1,
		c.Limits.TopicMinShared < 1, c.Limits.WarmMinutes < 0, c.Limits.TimeBudgetMs < 1:
		return errors.New("the limits must be positive")
	case c.Limits.AnchorMaxDocShare <= 0 || c.Limits.AnchorMaxDocShare > 1:
		return errors.New("limits.anchorMaxDocShare must be a share above 0 and at most 1")
	case c.Weights.AnchorMax < 0 || c.Weights.Anchor < 0 || c.Weights.Topic < 0:
		return errors.New("the weights of anchors and topic must not be negative")
	case c.Cleanup.EveryMinutes < 1 || c.Cleanup.LookAt < 1 || c.Cleanup.Delete < 0 || c.Cleanup.DeletedMinutes < 0 ||
		c.Cleanup.CompletedDays < 0 || c.Cleanup.InUseHours < 0:
		return errors.New("the clean-up's numbers must be positive")
	}
	return nil
}

// Hash is a short hash of the config, recorded with each decision.
func (c Config) Hash() string {
	b, _ := json.Marshal(c)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:6])
}

// parseConfig applies a JSON patch to the defaults.
func parseConfig(data []byte) (Config, error) {
	c := DefaultConfig()
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return DefaultConfig(), fmt.Errorf("it is not a valid patch of the session choice config: %w", err)
	}
	if err := c.check(); err != nil {
		return DefaultConfig(), err
	}
	return c, nil
}

// configFile reads sessions.json again when it changes (looked at no more than once a second).
type configFile struct {
	path string
	warn func(msg string, args ...any)

	mu      sync.Mutex // guards the following fields
	checked time.Time
	mod     time.Time
	size    int64
	cfg     Config
	loaded  bool
}

// get returns the config in force: the file's, or the defaults when there is none or it is bad
// (which is said once per change of the file).
func (f *configFile) get(now time.Time) Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.loaded && now.Sub(f.checked) < time.Second {
		return f.cfg
	}
	f.checked = now
	if f.path == "" {
		f.cfg, f.loaded = DefaultConfig(), true
		return f.cfg
	}
	fi, err := os.Stat(f.path)
	if err != nil {
		f.cfg, f.loaded, f.mod, f.size = DefaultConfig(), true, time.Time{}, 0
		return f.cfg
	}
	if f.loaded && fi.ModTime().Equal(f.mod) && fi.Size() == f.size {
		return f.cfg
	}
	f.mod, f.size, f.loaded = fi.ModTime(), fi.Size(), true
	data, err := os.ReadFile(f.path)
	if err == nil {
		f.cfg, err = parseConfig(data)
	}
	if err != nil {
		f.cfg = DefaultConfig()
		f.warn(fmt.Sprintf("%s is not used, so session choice uses its defaults: %v.", f.path, err))
	}
	return f.cfg
}

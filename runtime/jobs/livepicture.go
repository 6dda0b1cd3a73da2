package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/events"
)

// A run's live picture (spec 002 §8.16, Live view): while its agent uses a tab, the person sees
// a small JPEG of it, taken every few seconds and kept only in memory, the latest one per run.
// A tab held for a sign-in or a human check, one the person controls, a site they never have
// captured or see captures of first, or a page showing a saved secret or a key is not pictured:
// the picture says it is paused, and why.

// KindLive says a run's live picture changed (live only: never kept, seq 0).
const KindLive events.Kind = "run.live"

// Why a live picture is paused.
const (
	PausedSensitive = "sensitive"        // the tab waits for the person's sign-in or human check
	PausedControl   = "controlled"       // the person is taking the tab over
	PausedSecret    = "secret_on_screen" // the page shows a saved secret or something key-shaped
	PausedPrivate   = "private_site"     // the person never has the site captured, or sees its captures first
)

// The live picture's size and pace.
const (
	liveWidth   = 640
	liveQuality = 45
	liveEvery   = 3 * time.Second
	glanceWait  = 10 * time.Second // for one picture; the ticks a slow one spans are dropped
)

// Live is what KindLive says, and what a live picture shows.
type Live struct {
	RunID  string    `json:"runId"`
	At     time.Time `json:"at"`
	Tab    string    `json:"tab"`
	URL    string    `json:"url,omitempty"` // without its query, which may hold a token
	Title  string    `json:"title,omitempty"`
	Width  int       `json:"width,omitempty"`
	Height int       `json:"height,omitempty"`
	Paused string    `json:"paused,omitempty"`
}

// LivePicture is a run's latest live picture: Image is empty when Paused.
type LivePicture struct {
	Live
	Image []byte
}

// LivePicture is the run's latest live picture, if its agent uses a tab now.
func (s *Service) LivePicture(jobID string) (LivePicture, bool) {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	p, ok := s.live[jobID]
	return p, ok
}

// watchLive pictures the tab the run used last, every liveEvery, until the run ends.
func (r *run) watchLive() {
	g, ok := r.s.opts.Browser.(browser.Glancer)
	if !ok {
		return
	}
	every := r.s.opts.Timing.Live
	tick := time.NewTicker(every)
	defer tick.Stop()
	defer r.s.dropLive(r.job.ID)
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(r.ctx, glanceWait)
			r.glance(ctx, g)
			cancel()
		}
	}
}

// glance takes the run's live picture once and says so when it changed.
func (r *run) glance(ctx context.Context, g browser.Glancer) {
	tabs := r.s.opts.Browser.Tabs(r.tabWork())
	if len(tabs) == 0 {
		r.s.dropLive(r.job.ID)
		return
	}
	t := tabs[0]
	for _, x := range tabs[1:] {
		if x.LeaseEnds.After(t.LeaseEnds) { // each use renews a lease: the latest is the one used last
			t = x
		}
	}
	p := LivePicture{Live: Live{RunID: r.job.ID, At: r.s.opts.Now().UTC(), Tab: t.ID, URL: t.URL, Title: t.Title}}
	switch t.Sensitive {
	case "":
	case "takeover":
		p.Paused = PausedControl
	default:
		p.Paused = PausedSensitive
	}
	if p.Paused == "" && r.siteRule(siteName(t.URL)) != "" {
		p.Paused = PausedPrivate
	}
	if p.Paused == "" {
		shot, err := g.Glance(ctx, r.tabWork(), t.ID, liveWidth, liveQuality)
		switch {
		case errors.Is(err, browser.ErrBusy):
			return // the agent is acting on it: the next glance will do
		case errors.Is(err, browser.ErrSensitive):
			p.Paused = PausedSensitive
		case err != nil:
			r.s.log.Debug("jobs: a run's live picture", "job", r.job.ID, "err", err)
			return
		case !strings.HasPrefix(shot.URL, "http"):
			return // a tab still opening (about:blank) shows nothing yet
		case r.siteRule(siteName(shot.URL)) != "":
			p.Paused = PausedPrivate // it went there while the picture was taken
		case r.holdReason(shot.Text+"\n"+shot.URL+"\n"+shot.Title) != "":
			p.Paused = PausedSecret
		default:
			p.URL, p.Title, p.Width, p.Height, p.Image = shot.URL, shot.Title, shot.Width, shot.Height, shot.Image
		}
	}
	p.URL, p.Title = r.hide(browser.WithoutQuery(p.URL)), r.hide(p.Title)
	r.s.putLive(p)
}

// putLive keeps p as its run's latest picture and says so, unless it shows what the last did.
func (s *Service) putLive(p LivePicture) {
	s.liveMu.Lock()
	last, had := s.live[p.RunID]
	s.live[p.RunID] = p
	s.liveMu.Unlock()
	if had && last.Paused == p.Paused && last.Tab == p.Tab && last.URL == p.URL && last.Title == p.Title && bytes.Equal(last.Image, p.Image) {
		return
	}
	s.publishLive(p.Live)
}

// dropLive forgets a run's picture (its tabs closed, or it ended).
func (s *Service) dropLive(jobID string) {
	s.liveMu.Lock()
	_, had := s.live[jobID]
	delete(s.live, jobID)
	s.liveMu.Unlock()
	if had {
		s.publishLive(Live{RunID: jobID, At: s.opts.Now().UTC()})
	}
}

func (s *Service) publishLive(l Live) {
	if s.opts.Bus == nil {
		return
	}
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	s.opts.Bus.Publish(events.Event{At: l.At, Kind: KindLive, Subject: l.RunID, Data: b})
}

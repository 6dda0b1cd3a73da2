package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

// A takeover is the owner watching a node's terminal from its live card, typing in it, and taking
// control of it (spec 002 §8.16.2, §8.17). It starts watching; in control the node's
// terminal_send waits until the owner hands it back. Its time limits:
//
//   - it must be started (its WebSocket opened with the sealed secret) within TakeoverStartWithin;
//   - it lasts TakeoverWindow, and Extend moves its end TakeoverWindow later, never more than
//     TakeoverMax after it was made;
//   - it ends after TakeoverIdle without any message from the page (input, a frame seen, a ping).
//
// It also ends when the owner stops it, the node ends its live card, or the terminal ends.
const (
	TakeoverStartWithin = 2 * time.Minute
	TakeoverWindow      = 10 * time.Minute
	TakeoverMax         = time.Hour
	TakeoverIdle        = time.Minute
	maxOwnerText        = 64 << 10
)

// Why a takeover ended.
const (
	ReasonStopped     = "stopped"      // the owner stopped it
	ReasonLiveStopped = "live_stopped" // the node ended the live view
	ReasonClosed      = "closed"       // the terminal ended
	ReasonTime        = "time"         // its time ran out
	ReasonIdle        = "idle"         // a minute without the page
	ReasonNotStarted  = "not_started"  // never started in time
)

// ErrLiveEnded is a takeover asked of a live card whose view has ended (the API's 410).
var ErrLiveEnded = problem.New(problem.KindConflict, "This live view has ended.")

// Takeover modes.
const (
	ModeWatch   = "watch"
	ModeControl = "control"
)

// Takeover is what the page knows of a takeover.
type Takeover struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"` // terminal, browser
	Mode       string `json:"mode"` // watch, control
	LiveCardID string `json:"liveCardId,omitempty"`
	Session    string `json:"session,omitempty"` // a terminal's
	// A browser's: its tab, which browser shows it (tab, or clean for a sign-in), and the sign-in
	// card it was opened from.
	Tab         string    `json:"tab,omitempty"`
	Browser     string    `json:"browser,omitempty"`
	LoginCardID string    `json:"loginCardId,omitempty"`
	SignIn      bool      `json:"signIn,omitempty"` // a sign-in's view: a login card's, or a run's held tab's (RunID)
	RunID       string    `json:"runId,omitempty"`
	Note        string    `json:"note,omitempty"` // why it shows the tab and not the clean browser; a sign-in not seen done
	EndsAt      time.Time `json:"endsAt"`
	MaxEndsAt   time.Time `json:"maxEndsAt"`
	Ended       bool      `json:"ended,omitempty"`
	EndReason   string    `json:"endReason,omitempty"`
}

// takeoverSet are the takeovers open now, by id.
type takeoverSet struct {
	mu   sync.Mutex // guards the following field
	byID map[string]*liveTakeover
}

type liveTakeover struct {
	s       *Service
	term    *nodeTerm // a terminal's view, or
	tab     *liveTab  // a browser tab's
	login   string    // the sign-in card a browser view was opened from
	signIn  bool      // a sign-in's view: a login card's, or a run's held tab's
	clean   bool      // it opened the clean browser
	created time.Time
	done    chan struct{} // closed when it ends
	inputs  atomic.Int64  // the owner's inputs applied, for the ledger (never what they were)

	mu       sync.Mutex // guards the following fields
	info     Takeover
	started  bool
	lastSeen time.Time
	timer    *time.Timer
	switched chan struct{} // a browser view's: closed (and made again) when its mode changes
}

// OpenTakeover opens a takeover of the terminal a live card shows, watching. A card whose terminal
// has ended is ended too, and answers a conflict saying so.
func (s *Service) OpenTakeover(ctx context.Context, liveCardID string) (Takeover, error) {
	m, err := s.Message(ctx, liveCardID)
	if err != nil {
		return Takeover{}, err
	}
	c, ok := liveCardOf(m)
	if !ok {
		return Takeover{}, problem.NotFound("Message %q is not a live card.", liveCardID)
	}
	if c.Status == LiveEnded {
		return Takeover{}, ErrLiveEnded
	}
	if c.Kind == "browser" {
		return s.openTabTakeover(ctx, m, c)
	}
	s.terms.mu.Lock()
	t := s.terms.byID[c.Session]
	s.terms.mu.Unlock()
	if t != nil && t.nodeID == m.NodeID {
		// A terminal its host kept through a restart comes back without its card: this is it.
		t.liveMu.Lock()
		if t.liveCard() == "" {
			t.setLiveCard(m.ID)
		}
		t.liveMu.Unlock()
	}
	if t == nil || t.liveCard() != m.ID {
		// Gone since (its shell ended while Ensemble was stopped): the card says so from now on.
		if err := s.endLiveCard(ctx, m.ID, "", LiveClosed); err != nil {
			return Takeover{}, err
		}
		return Takeover{}, ErrLiveEnded
	}
	now := s.now()
	to := &liveTakeover{s: s, term: t, created: now, done: make(chan struct{}), lastSeen: now,
		info: Takeover{ID: newTakeoverID(), Kind: "terminal", Mode: ModeWatch, LiveCardID: m.ID, Session: c.Session,
			EndsAt: now.Add(TakeoverWindow), MaxEndsAt: now.Add(TakeoverMax)}}
	s.addTakeover(to)
	s.noteLive(KindTakeoverStep, LiveStep{Step: "created", TakeoverID: to.info.ID, Session: c.Session, LiveCardID: m.ID, Kind: "terminal"})
	return to.snapshot(), nil
}

// addTakeover keeps an open takeover and sets its first deadline.
func (s *Service) addTakeover(to *liveTakeover) {
	s.takeovers.mu.Lock()
	if s.takeovers.byID == nil {
		s.takeovers.byID = map[string]*liveTakeover{}
	}
	s.takeovers.byID[to.info.ID] = to
	s.takeovers.mu.Unlock()
	to.mu.Lock()
	to.armLocked()
	to.mu.Unlock()
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func newTakeoverID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "tk_" + hex.EncodeToString(b)
}

func (s *Service) takeover(id string) (*liveTakeover, error) {
	s.takeovers.mu.Lock()
	to := s.takeovers.byID[id]
	s.takeovers.mu.Unlock()
	if to == nil {
		return nil, problem.NotFound("There is no takeover %q open; it may have ended.", id)
	}
	return to, nil
}

// TakeoverInfo describes an open takeover.
func (s *Service) TakeoverInfo(id string) (Takeover, error) {
	to, err := s.takeover(id)
	if err != nil {
		return Takeover{}, err
	}
	return to.snapshot(), nil
}

// TakeoverControl switches a takeover to control (on) or back to watching. Only one takeover at a
// time controls a terminal or a tab; a sign-in's view is always in control.
func (s *Service) TakeoverControl(id string, on bool) (Takeover, error) {
	to, err := s.takeover(id)
	if err != nil {
		return Takeover{}, err
	}
	switch {
	case to.login != "" && !on:
		return Takeover{}, problem.Conflict("A sign-in's view is always in control; stop it to give the tab back.")
	case to.login != "":
	case on:
		err = to.control().takeControl(id)
	default:
		to.control().handBackFrom(id)
	}
	if err != nil {
		return Takeover{}, err
	}
	to.mu.Lock()
	was := to.info.Mode
	to.info.Mode = ModeWatch
	if on {
		to.info.Mode = ModeControl
	}
	if to.switched != nil && was != to.info.Mode {
		close(to.switched)
		to.switched = make(chan struct{})
	}
	to.lastSeen = s.now()
	kind := to.info.Kind
	to.mu.Unlock()
	step := "watch"
	if on {
		step = "control"
	}
	s.noteLive(KindTakeoverStep, LiveStep{Step: step, TakeoverID: id, Kind: kind})
	return to.snapshot(), nil
}

// ExtendTakeover moves a takeover's end TakeoverWindow later, at most TakeoverMax after it was made.
func (s *Service) ExtendTakeover(id string) (Takeover, error) {
	to, err := s.takeover(id)
	if err != nil {
		return Takeover{}, err
	}
	to.mu.Lock()
	defer to.mu.Unlock()
	if !to.info.EndsAt.Before(to.info.MaxEndsAt) {
		return Takeover{}, problem.Conflict("A takeover lasts at most %s; open the live view again for more time.", TakeoverMax)
	}
	to.info.EndsAt = earliest(to.info.EndsAt.Add(TakeoverWindow), to.info.MaxEndsAt)
	to.lastSeen = s.now()
	to.armLocked()
	return to.info, nil
}

// EndTakeover ends a takeover; control goes back to the node.
func (s *Service) EndTakeover(id, reason string) (Takeover, error) {
	to, err := s.takeover(id)
	if err != nil {
		return Takeover{}, err
	}
	to.end(reason)
	return to.snapshot(), nil
}

// endTakeoversOf ends every takeover of a live card or a sign-in card.
func (s *Service) endTakeoversOf(card, reason string) {
	s.takeovers.mu.Lock()
	var of []*liveTakeover
	for _, to := range s.takeovers.byID {
		if to.info.LiveCardID == card || to.login == card { // neither ever changes
			of = append(of, to)
		}
	}
	s.takeovers.mu.Unlock()
	for _, to := range of {
		to.end(reason)
	}
}

func (to *liveTakeover) snapshot() Takeover {
	to.mu.Lock()
	defer to.mu.Unlock()
	return to.info
}

// armLocked sets the timer for the takeover's next deadline.
func (to *liveTakeover) armLocked() {
	at, _ := to.deadlineLocked()
	d := at.Sub(to.s.now())
	if to.timer == nil {
		to.timer = time.AfterFunc(d, to.check)
		return
	}
	to.timer.Reset(d)
}

// deadlineLocked is when the takeover ends unless something happens first, and why.
func (to *liveTakeover) deadlineLocked() (time.Time, string) {
	if !to.started {
		return earliest(to.created.Add(TakeoverStartWithin), to.info.EndsAt), ReasonNotStarted
	}
	if idle := to.lastSeen.Add(TakeoverIdle); idle.Before(to.info.EndsAt) {
		return idle, ReasonIdle
	}
	return to.info.EndsAt, ReasonTime
}

// check ends the takeover when its deadline has come, else sets the timer again: touches only move
// lastSeen, and the timer finds out when it fires.
func (to *liveTakeover) check() {
	to.mu.Lock()
	if to.info.Ended {
		to.mu.Unlock()
		return
	}
	at, why := to.deadlineLocked()
	if to.s.now().Before(at) {
		to.armLocked()
		to.mu.Unlock()
		return
	}
	to.mu.Unlock()
	to.end(why)
}

func (to *liveTakeover) end(reason string) {
	to.mu.Lock()
	if to.info.Ended {
		to.mu.Unlock()
		return
	}
	to.info.Ended, to.info.EndReason = true, reason
	if to.timer != nil {
		to.timer.Stop()
	}
	id, kind := to.info.ID, to.info.Kind
	to.mu.Unlock()
	s := to.s
	s.takeovers.mu.Lock()
	delete(s.takeovers.byID, id)
	watched := false
	for _, o := range s.takeovers.byID {
		watched = watched || to.term != nil && o.term == to.term
	}
	s.takeovers.mu.Unlock()
	to.control().handBackFrom(id)
	if to.tab != nil {
		to.closeClean()
	} else if !watched {
		to.term.sess.Resize(terminalCols, terminalRows) // the node's own size, once nobody watches
	}
	close(to.done)
	s.noteLive(KindTakeoverStep, LiveStep{Step: "ended", TakeoverID: id, Kind: kind, Reason: reason, Inputs: int(to.inputs.Load())})
}

// control is the control of what the takeover shows: its tab's or its terminal's.
func (to *liveTakeover) control() *liveControl {
	if to.tab != nil {
		return &to.tab.liveControl
	}
	return &to.term.liveControl
}

// touch notes the page is there.
func (to *liveTakeover) touch() {
	to.mu.Lock()
	to.lastSeen = to.s.now()
	to.mu.Unlock()
}

// StartTakeover starts an open takeover's view, once: the caller has opened the page's sealed
// secret. The view gives the terminal's frames and takes the owner's input.
func (s *Service) StartTakeover(id string) (*TakeoverView, error) {
	to, err := s.takeover(id)
	if err != nil {
		return nil, err
	}
	to.mu.Lock()
	defer to.mu.Unlock()
	if to.started {
		return nil, problem.Conflict("This takeover has started already; open the live view again.")
	}
	to.started, to.lastSeen = true, s.now()
	to.armLocked()
	s.log.Info("node takeover started", "takeover", id, "kind", to.info.Kind)
	return &TakeoverView{to: to}, nil
}

// TakeoverView is a started takeover, as its connection to the page uses it.
type TakeoverView struct{ to *liveTakeover }

// Frame is the terminal's screen now, saved secrets hidden.
func (v *TakeoverView) Frame() terminal.Frame { return v.to.term.sess.Frame(v.to.s.hide) }

// Changed is closed when the screen may have changed.
func (v *TakeoverView) Changed() <-chan struct{} { return v.to.term.sess.Changed() }

// Done is closed when the takeover ends; Info then says why.
func (v *TakeoverView) Done() <-chan struct{} { return v.to.done }

// Info describes the takeover now.
func (v *TakeoverView) Info() Takeover { return v.to.snapshot() }

// Touch notes the page is there (a ping, a frame seen).
func (v *TakeoverView) Touch() { v.to.touch() }

// Input is one thing the owner did in the view.
type Input struct {
	T    string `json:"t"` // tty, tty-key, tty-size, ping; a browser's tap, down, up, move, wheel, key, text
	Text string `json:"text,omitempty"`
	Key  string `json:"key,omitempty"`
	Cols int    `json:"cols,omitempty"`
	Rows int    `json:"rows,omitempty"`
	// A browser's pointer, as fractions 0..1 of the picture's width and height, and a wheel's
	// scroll in CSS pixels.
	X  float64 `json:"x,omitempty"`
	Y  float64 `json:"y,omitempty"`
	DX float64 `json:"dx,omitempty"`
	DY float64 `json:"dy,omitempty"`
}

// ownerKeys are the named keys the view sends (spec 002 §8.17).
var ownerKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{"Enter", "Backspace", "Tab", "Escape", "Up", "Down", "Left", "Right", "Home", "End", "PageUp", "PageDown", "Delete"} {
		m[k] = true
	}
	for i := 1; i <= 12; i++ {
		m[fmt.Sprintf("F%d", i)] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		m["Ctrl+"+string(c)] = true
	}
	return m
}()

// Input applies the owner's input, watching or in control: it is their shell, so it is typed as it
// is, not judged (spec 002 §8.17). The node's judge no longer knows the line at the prompt.
func (v *TakeoverView) Input(in Input) error {
	to := v.to
	select {
	case <-to.done:
		return problem.Conflict("This takeover has ended.")
	default:
	}
	to.touch()
	if to.tab != nil {
		return v.browserInput(in)
	}
	t := to.term
	var b []byte
	switch in.T {
	case "ping":
		return nil
	case "tty":
		if len(in.Text) > maxOwnerText || !utf8.ValidString(in.Text) {
			return problem.Invalid("A tty event holds at most %d KB of text.", maxOwnerText>>10)
		}
		b = []byte(in.Text)
	case "tty-key":
		if !ownerKeys[in.Key] {
			return problem.Invalid("%q is not a key the view sends.", in.Key)
		}
		b, _ = terminal.KeyBytes(in.Key, t.sess.AppCursor())
	case "tty-size":
		if in.Cols < 10 || in.Rows < 3 || in.Cols > 500 || in.Rows > 200 {
			return problem.Invalid("A tty-size is 10 to 500 columns and 3 to 200 rows.")
		}
		return t.sess.Resize(in.Cols, in.Rows)
	default:
		return problem.Invalid("%q is not an event of a terminal's view; send tty, tty-key, tty-size or ping.", in.T)
	}
	t.ownerTyped.Store(true)
	t.idle.Reset(TerminalIdle)
	_, err := t.sess.Write(b)
	if err == nil {
		to.inputs.Add(1)
	}
	return err
}

package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/takeover"
)

// The owner's live view of a node's terminal or browser tab (spec 002 §8.17), opened from its live
// card, and a sign-in's view of the clean browser (§8.16.2), opened from its sign-in card:
//
//	POST   /api/node/takeovers                 {liveCardId}, {loginCardId} or {runId, tab} (a run's tab held for the
//	                                           person's sign-in, asked on Needs me) → 201 {takeover}; an ended card or
//	                                           sign-in is 410
//	GET    /api/node/takeovers/{id}            {takeover}
//	POST   /api/node/takeovers/{id}/control    {on} → {takeover}: control (the node's terminal_send waits) or watch
//	POST   /api/node/takeovers/{id}/extend     {takeover} with its end 10 minutes later; at the hour 409
//	POST   /api/node/takeovers/{id}/end        {done}: I'm done (a sign-in is checked at once; not seen
//	                                           signed in, the view stays open, its note says why) or Stop → {takeover}
//	DELETE /api/node/takeovers/{id}            stops it → {takeover}
//	GET    /api/node/takeovers/{id}/ws         the view's WebSocket, below
//
// The WebSocket: the page's first message is text, {"sealed": box}, a 32-byte secret (base64url)
// sealed for this computer's key with purpose "takeover", decisionId the takeover's id and name the
// terminal's session, on this page's Origin. Every message after it, both ways, is binary and
// encrypted with the keys derived from that secret (runtime/takeover): from the runtime, frames
// ({t: "frame", kind: "terminal", seq, cols, rows, cursor, title, mode, payload: {rows}}) when the
// screen changed, at most 10 a second and two not yet seen, and {t: "end", reason} before it
// closes; from the page, {events: [...]} of tty, tty-key, tty-size, ping and {t: "seen", seq}.
//
// A browser's view is the same, but for its frames, which are pictures: binary plaintexts of a
// JSON header and the JPEG (runtime/takeover/jpeg.go), at most two unseen, the newest only, none
// like the last; and its input: {t: tap|down|up|move, x, y} (fractions of the picture), {t: wheel,
// x, y, dx, dy}, {t: key, key} (as a keyboard sends it) and {t: text, text}, applied only in control.
// The name its start is sealed with is the tab (t1…), not a session.
const (
	takeoverStartWait = 10 * time.Second // for the sealed start after the upgrade
	takeoverFrameGap  = 100 * time.Millisecond
	takeoverInFlight  = 2
	takeoverUnseenMax = 5 * time.Second // a frame is sent anyway when the page has not said for this long
	takeoverReadLimit = 128 << 10
)

func (s *Server) mountTakeovers(api func(string, http.HandlerFunc)) {
	if s.opts.Nodes == nil {
		return
	}
	answer := func(w http.ResponseWriter, r *http.Request, status int, t node.Takeover, err error) {
		switch {
		case errors.Is(err, node.ErrLiveEnded), errors.Is(err, node.ErrSignInEnded):
			writeError(w, http.StatusGone, err.Error())
		case err != nil:
			s.writeErr(w, r, err)
		default:
			writeJSON(w, status, map[string]any{"takeover": t})
		}
	}
	api("POST /api/node/takeovers", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			LiveCardID  string `json:"liveCardId"`
			LoginCardID string `json:"loginCardId"`
			RunID       string `json:"runId"` // with tab: a run's own sign-in, asked on Needs me
			Tab         string `json:"tab"`
		}
		if err := decode(w, r, &in); err != nil {
			s.writeErr(w, r, err)
			return
		}
		const which = `{"liveCardId": "…"}, {"loginCardId": "…"} or {"runId": "…", "tab": "t1"}`
		var t node.Takeover
		var err error
		given := 0
		for _, named := range []bool{in.LiveCardID != "", in.LoginCardID != "", in.RunID != "" || in.Tab != ""} {
			if named {
				given++
			}
		}
		switch {
		case given > 1:
			writeError(w, http.StatusBadRequest, "Open one view at a time: "+which+".")
			return
		case in.LoginCardID != "":
			t, err = s.opts.Nodes.OpenLoginTakeover(r.Context(), in.LoginCardID)
		case in.LiveCardID != "":
			t, err = s.opts.Nodes.OpenTakeover(r.Context(), in.LiveCardID)
		case in.RunID != "" && in.Tab != "":
			t, err = s.opts.Nodes.OpenRunSignInTakeover(r.Context(), in.RunID, in.Tab)
		default:
			writeError(w, http.StatusBadRequest, "Say what to open: "+which+".")
			return
		}
		answer(w, r, http.StatusCreated, t, err)
	})
	api("GET /api/node/takeovers/{id}", func(w http.ResponseWriter, r *http.Request) {
		t, err := s.opts.Nodes.TakeoverInfo(r.PathValue("id"))
		answer(w, r, http.StatusOK, t, err)
	})
	api("POST /api/node/takeovers/{id}/control", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			On *bool `json:"on"`
		}
		if err := decode(w, r, &in); err != nil {
			s.writeErr(w, r, err)
			return
		}
		if in.On == nil {
			writeError(w, http.StatusBadRequest, `Say whether to take control: {"on": true} or {"on": false}.`)
			return
		}
		t, err := s.opts.Nodes.TakeoverControl(r.PathValue("id"), *in.On)
		answer(w, r, http.StatusOK, t, err)
	})
	api("POST /api/node/takeovers/{id}/extend", func(w http.ResponseWriter, r *http.Request) {
		t, err := s.opts.Nodes.ExtendTakeover(r.PathValue("id"))
		answer(w, r, http.StatusOK, t, err)
	})
	api("POST /api/node/takeovers/{id}/end", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Done *bool `json:"done"`
		}
		if err := decode(w, r, &in); err != nil {
			s.writeErr(w, r, err)
			return
		}
		if in.Done == nil {
			writeError(w, http.StatusBadRequest, `Say whether you are done or stopping: {"done": true} or {"done": false}.`)
			return
		}
		t, err := s.opts.Nodes.FinishTakeover(r.Context(), r.PathValue("id"), *in.Done)
		answer(w, r, http.StatusOK, t, err)
	})
	api("DELETE /api/node/takeovers/{id}", func(w http.ResponseWriter, r *http.Request) {
		t, err := s.opts.Nodes.EndTakeover(r.PathValue("id"), node.ReasonStopped)
		answer(w, r, http.StatusOK, t, err)
	})
	api("GET /api/node/takeovers/{id}/ws", s.takeoverSocket)
}

// takeoverSocket serves a view's WebSocket. The guard has already refused an Origin other than the
// runtime's own (through the relay, other than the relay's); the sealed start is bound to it too.
func (s *Server) takeoverSocket(w http.ResponseWriter, r *http.Request) {
	info, err := s.opts.Nodes.TakeoverInfo(r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	origin := r.Header.Get("Origin")
	switch {
	case s.opts.Secrets == nil:
		writeError(w, http.StatusServiceUnavailable, "This computer has no key to open a live view's secret with.")
		return
	case origin == "":
		writeError(w, http.StatusForbidden, "A live view opens only from Ensemble's own page.")
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered
	}
	c.SetReadLimit(takeoverReadLimit)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	ch, view, why := s.startTakeover(ctx, c, info, origin)
	if view == nil {
		c.Close(websocket.StatusPolicyViolation, closeReason(why))
		return
	}
	seen := make(chan int, 8)
	go s.takeoverInput(ctx, cancel, c, ch, view, seen)
	if view.Kind() == "browser" {
		s.takeoverBrowserFrames(ctx, c, ch, view, seen)
		return
	}
	s.takeoverFrames(ctx, c, ch, view, seen)
}

// startTakeover reads the sealed start, opens it, and starts the view; or says why not.
func (s *Server) startTakeover(ctx context.Context, c *websocket.Conn, info node.Takeover, origin string) (*takeover.Channel, *node.TakeoverView, string) {
	rctx, rcancel := context.WithTimeout(ctx, takeoverStartWait)
	typ, data, err := c.Read(rctx)
	rcancel()
	if err != nil {
		return nil, nil, "The live view's start did not come in time."
	}
	var start struct {
		Sealed *secrets.Box `json:"sealed"`
	}
	if typ != websocket.MessageText || json.Unmarshal(data, &start) != nil || start.Sealed == nil {
		return nil, nil, `Start with {"sealed": box}: the view's secret sealed for this computer.`
	}
	kid := s.opts.Secrets.SealKey().Kid
	v, err := s.opts.Secrets.Open(ctx, *start.Sealed, secrets.Expect{DeviceID: kid, DecisionID: info.ID, Name: cmp.Or(info.Session, info.Tab),
		Origins: []string{origin}, Purpose: "takeover"})
	var se *secrets.SealError
	if errors.As(err, &se) {
		return nil, nil, se.Msg
	}
	if err != nil {
		s.log.Error("open a takeover's secret", "takeover", info.ID, "err", err)
		return nil, nil, "The live view's secret could not be opened."
	}
	secret, err := base64.RawURLEncoding.DecodeString(v.Value)
	if err != nil || len(secret) != takeover.SecretSize {
		return nil, nil, "The live view's secret is not 32 bytes in base64url."
	}
	ch, err := takeover.RuntimeChannel(secret, info.ID)
	if err != nil {
		return nil, nil, "The live view's secret is not 32 bytes in base64url."
	}
	view, err := s.opts.Nodes.StartTakeover(info.ID)
	if err != nil {
		return nil, nil, err.Error()
	}
	return ch, view, ""
}

// takeoverFrames sends the screen when it changed, at most every takeoverFrameGap and while fewer
// than takeoverInFlight frames are unseen, until the view or the connection ends.
func (s *Server) takeoverFrames(ctx context.Context, c *websocket.Conn, ch *takeover.Channel, view *node.TakeoverView, seen <-chan int) {
	write := func(v any) error {
		b, _ := json.Marshal(v)
		wctx, wcancel := context.WithTimeout(ctx, termWriteTimeout)
		defer wcancel()
		return c.Write(wctx, websocket.MessageBinary, ch.Seal(b))
	}
	var last []byte
	sent, drawn := 0, 0
	var sentAt time.Time
	ping := time.NewTicker(termPing)
	defer ping.Stop()
	for {
		changed := view.Changed() // before the screen is read: output after it closes this
		blocked := sent-drawn >= takeoverInFlight && time.Since(sentAt) < takeoverUnseenMax
		if !blocked {
			f := view.Frame()
			info := view.Info()
			body, _ := json.Marshal(takeover.NewTerminalFrame(f, 0, info.Mode))
			if !bytes.Equal(body, last) {
				sent++
				if write(takeover.NewTerminalFrame(f, sent, info.Mode)) != nil {
					return
				}
				last, sentAt = body, time.Now()
			}
		}
		var unblock <-chan time.Time
		if blocked {
			unblock = time.After(takeoverUnseenMax - time.Since(sentAt))
		}
		select {
		case <-changed: // wait the gap below, then draw what there is: changes in between go in one frame
		case n := <-seen:
			drawn = max(drawn, min(n, sent))
			continue
		case <-unblock:
			continue
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, termWriteTimeout)
			err := c.Ping(pctx)
			pcancel()
			if err != nil {
				return
			}
			continue
		case <-view.Done():
			write(takeover.End{T: "end", Reason: view.Info().EndReason})
			c.Close(websocket.StatusNormalClosure, closeReason("The live view has ended ("+view.Info().EndReason+")."))
			return
		case <-ctx.Done():
			c.Close(websocket.StatusNormalClosure, "")
			return
		}
		gap := time.NewTimer(takeoverFrameGap)
		select {
		case <-gap.C:
		case <-view.Done():
			gap.Stop()
		case <-ctx.Done():
			gap.Stop()
		}
	}
}

// takeoverInput reads the page's encrypted events until it goes away, or sends one that does not
// open, which closes the connection saying so.
func (s *Server) takeoverInput(ctx context.Context, cancel context.CancelFunc, c *websocket.Conn, ch *takeover.Channel, view *node.TakeoverView, seen chan<- int) {
	defer cancel()
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var plain []byte
		if typ == websocket.MessageBinary {
			plain, err = ch.Open(data)
		}
		var evs takeover.Events
		if typ != websocket.MessageBinary || err != nil || json.Unmarshal(plain, &evs) != nil {
			c.Close(websocket.StatusPolicyViolation, "A message did not open with this view's key, or came again or out of order.")
			return
		}
		view.Touch()
		for _, raw := range evs.Events {
			var ev struct {
				node.Input
				Seq int `json:"seq"`
			}
			if json.Unmarshal(raw, &ev) != nil {
				continue
			}
			if ev.T == "seen" {
				select {
				case seen <- ev.Seq:
				default: // the frames loop is busy; a later seen says as much
				}
				continue
			}
			if err := view.Input(ev.Input); err != nil {
				s.log.Debug("a takeover's event refused", "takeover", view.Info().ID, "event", ev.T)
			}
		}
	}
}

// takeoverBrowserFrames streams a browser view's pictures (browserStream) until the view or the
// connection ends, and tells the page why it ended.
func (s *Server) takeoverBrowserFrames(ctx context.Context, c *websocket.Conn, ch *takeover.Channel, view *node.TakeoverView, seen <-chan int) {
	write := func(plain []byte) error {
		wctx, wcancel := context.WithTimeout(ctx, termWriteTimeout)
		defer wcancel()
		return c.Write(wctx, websocket.MessageBinary, ch.Seal(plain))
	}
	ping := func() error {
		pctx, pcancel := context.WithTimeout(ctx, termWriteTimeout)
		defer pcancel()
		return c.Ping(pctx)
	}
	err := newBrowserStream(view, write, ping, time.Now).run(ctx, seen, termPing)
	select {
	case <-view.Done():
		reason := view.Info().EndReason
		b, _ := json.Marshal(takeover.End{T: "end", Reason: reason})
		write(b)
		c.Close(websocket.StatusNormalClosure, closeReason("The live view has ended ("+reason+")."))
		return
	default:
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("a browser view's stream ended", "takeover", view.Info().ID, "err", err)
		c.Close(websocket.StatusInternalError, closeReason("The tab's pictures stopped: "+err.Error()))
		return
	}
	c.Close(websocket.StatusNormalClosure, "")
}

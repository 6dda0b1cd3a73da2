package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
)

const (
	sseBuffer     = 1024 // events a client may fall behind before it is dropped
	sseBacklog    = 500  // events read from SQLite at a time when replaying
	sseWriteLimit = 10 * time.Second
)

// events streams the event log as server-sent events. The id of each message is the event's seq.
// A client resumes with Last-Event-ID (EventSource sends it when it reconnects) or ?since=N (or
// ?after=N); the events it missed are replayed from SQLite, then it follows the live stream.
// Without either, it gets only what happens from now on. A client that has seen a seq this log
// never reached (the data folder was restored from a backup, or is another one) is sent a "reset"
// event first: what it holds may no longer be so, and it should read its lists again.
//
// ?kinds= (comma-separated kinds and families, "run.,task.created") and ?subject= narrow the
// stream to what a client shows: one stream serves the board and, with kinds=run.&subject=ID, a
// run's trace.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	after, err := resumePoint(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	f, err := events.ParseFilter(r.URL.Query().Get("kinds"), r.URL.Query().Get("subject"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "The event filter is not valid: "+err.Error())
		return
	}
	s.stream(w, r, after, -1, f)
}

// stream answers with server-sent events: those f selects after the seq the client has seen
// (after; -1 for "from now on"), read back from SQLite, then the live ones f selects. A client that
// has seen more than the log holds is sent a [events.KindReset] event, then the stream goes on as
// if it had asked for restart.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, after, restart int64, f events.Filter) {
	// Subscribe before reading the backlog, so nothing committed in between is missed; whatever
	// arrives twice is skipped by seq.
	sub := s.bus.Subscribe(sseBuffer)
	defer sub.Close()
	newest, err := events.Last(r.Context(), s.store.Reader())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	asked, reset := after, after > newest
	if reset {
		after = restart
	}
	if after < 0 {
		after = newest
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(write func(io.Writer) error) error {
		rc.SetWriteDeadline(time.Now().Add(sseWriteLimit))
		if err := write(w); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send(func(w io.Writer) error { _, err := fmt.Fprint(w, "retry: 2000\n: live\n\n"); return err }); err != nil {
		return
	}
	if reset {
		s.log.Info("event stream: a client resumed from past the newest event; told to reset", "from", asked, "newest", newest)
		// Its id is the newest seq, so the client's next reconnect resumes from here.
		if err := send(func(w io.Writer) error {
			return writeEvent(w, events.Event{Seq: newest, Kind: events.KindReset, Data: mustJSON(events.Reset{Newest: newest})})
		}); err != nil {
			return
		}
	}
	for {
		evs, err := events.Select(r.Context(), s.store.Reader(), f, after, sseBacklog)
		if err != nil {
			s.log.Warn("event replay failed", "after", after, "err", err)
			return
		}
		for _, ev := range evs {
			if err := send(func(w io.Writer) error { return writeEvent(w, ev) }); err != nil {
				return
			}
			after = ev.Seq
		}
		if len(evs) < sseBacklog {
			break
		}
	}
	keepalive := time.NewTicker(s.opts.Keepalive)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.Done():
			if err := sub.Err(); errors.Is(err, events.ErrSlow) {
				s.log.Info("event stream dropped a slow client", "at", after)
			}
			return
		case ev := <-sub.C:
			if ev.Seq == 0 {
				// A live-only event (a node's reply as it is written): never replayed, so it has no id
				// and moves no resume point.
				if f.Match(ev) {
					if err := send(func(w io.Writer) error { return writeLive(w, ev) }); err != nil {
						return
					}
				}
				continue
			}
			if ev.Seq <= after || !f.Match(ev) {
				continue
			}
			if err := send(func(w io.Writer) error { return writeEvent(w, ev) }); err != nil {
				return
			}
			after = ev.Seq
		case <-keepalive.C:
			if err := send(func(w io.Writer) error { _, err := io.WriteString(w, ": keepalive\n\n"); return err }); err != nil {
				return
			}
		}
	}
}

// resumePoint is the seq a client has seen, from Last-Event-ID, ?since= or ?after=; -1 when it gave
// none.
func resumePoint(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	for _, q := range []string{"since", "after"} {
		if v == "" {
			v = r.URL.Query().Get(q)
		}
	}
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("The event id %q is not a sequence number.", v)
	}
	return n, nil
}

// mustJSON encodes a value that always encodes.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// writeEvent writes one SSE message. Data is compact JSON, which holds no newline.
// writeLive writes a live-only event, without an id.
func writeLive(w io.Writer, ev events.Event) error {
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Kind, ev.Data)
	return err
}

func writeEvent(w io.Writer, ev events.Event) error {
	_, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Kind, ev.Data)
	return err
}

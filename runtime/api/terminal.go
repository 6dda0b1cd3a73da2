package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"

	"github.com/ensemblework/ensemble/runtime/terminal"
)

// Terminal WebSocket protocol (GET /api/terminals/{id}/ws):
//
//	server → client  binary frames: terminal output. The first is the screen as it is (it starts
//	                 with a reset, then the scrollback, the screen, the cursor and the modes the
//	                 program turned on); then the live output. The server closes with a reason
//	                 when the shell ends ("The shell ended (exit code 0).") or the client falls
//	                 behind; the client connects again for the current screen.
//	client → server  text frames, one JSON object each:
//	                 {"type":"input","data":"ls\r"}      what the person typed, as the terminal encodes it
//	                 {"type":"resize","cols":120,"rows":40}
const (
	termReadLimit    = 64 << 10 // one input message: a large paste
	termFrameMax     = 64 << 10 // output chunks are joined into frames of at most this
	termWriteTimeout = 10 * time.Second
	termPing         = 30 * time.Second // keeps a relayed connection from being dropped as idle
	termMaxCols      = 1000
	termMaxRows      = 500
)

// mountTerminals adds the person's terminals:
//
//	POST   /api/terminals              {folder?, login?, cols?, rows?}: a shell, or an agent's sign-in
//	GET    /api/terminals              the open terminals
//	GET    /api/terminals/{id}/ws      [cols] [rows]: the WebSocket above
//	DELETE /api/terminals/{id}         ends it: its processes are hung up, then killed
func (s *Server) mountTerminals(api func(string, http.HandlerFunc)) {
	if s.opts.Terminals == nil {
		return
	}
	api("POST /api/terminals", s.startTerminal)
	api("GET /api/terminals", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"terminals": s.opts.Terminals.List()})
	})
	api("GET /api/terminals/{id}/ws", s.terminalSocket)
	api("DELETE /api/terminals/{id}", func(w http.ResponseWriter, r *http.Request) {
		t := s.terminal(w, r)
		if t == nil {
			return
		}
		t.Close()
		writeJSON(w, http.StatusOK, map[string]any{"id": t.ID(), "ended": true, "exitCode": t.ExitCode()})
	})
}

type startTerminalBody struct {
	Folder string `json:"folder"`
	// Login names an agent whose own sign-in command runs instead of a shell ("claude" runs
	// `claude`, "codex" runs `codex login`). The command comes from the agent's driver, never from
	// the request.
	Login string `json:"login"`
	Cols  int    `json:"cols"`
	Rows  int    `json:"rows"`
}

func (s *Server) startTerminal(w http.ResponseWriter, r *http.Request) {
	var b startTerminalBody
	if err := decode(w, r, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if msg := badSize(b.Cols, b.Rows); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	o := terminal.StartOptions{Folder: b.Folder, Cols: b.Cols, Rows: b.Rows}
	if b.Login != "" {
		cmd, msg := s.loginCommand(r.Context(), b.Login)
		if msg != "" {
			writeError(w, http.StatusBadRequest, msg)
			return
		}
		o.Command = cmd
	}
	t, err := s.opts.Terminals.Start(o)
	switch {
	case err == nil:
		writeJSON(w, http.StatusCreated, t.Info())
	case errors.Is(err, terminal.ErrTooMany):
		writeError(w, http.StatusConflict, "Too many terminals are open; close one first.")
	case errors.Is(err, terminal.ErrUnsupported):
		writeError(w, http.StatusNotImplemented, "Terminals are not supported on Windows yet.")
	default:
		s.writeErr(w, r, err) // a folder it cannot start in is a 400

	}
}

// badSize is the sentence for a size a terminal cannot have; "" for zero (the default) or a good one.
func badSize(cols, rows int) string {
	if cols < 0 || rows < 0 || cols > termMaxCols || rows > termMaxRows {
		return fmt.Sprintf("cols must be from 1 to %d and rows from 1 to %d.", termMaxCols, termMaxRows)
	}
	return ""
}

// loginCommand is the sign-in command of the agent named agent, from its driver's detection; or the
// sentence saying there is none.
func (s *Server) loginCommand(ctx context.Context, agent string) (cmd, msg string) {
	if s.opts.Agents != nil {
		for _, d := range s.opts.Agents.List(ctx) {
			if d.Name == agent && d.Login != "" {
				return d.Login, ""
			}
		}
	}
	return "", fmt.Sprintf("There is no sign-in command for an agent named %q.", agent)
}

// terminal finds the open terminal the path names, or answers 404.
func (s *Server) terminal(w http.ResponseWriter, r *http.Request) *terminal.Session {
	t := s.opts.Terminals.Get(r.PathValue("id"))
	if t == nil {
		writeError(w, http.StatusNotFound, "There is no open terminal with that id; it may have ended.")
	}
	return t
}

// termMessage is one message from the client.
type termMessage struct {
	Type string `json:"type"` // input, resize
	Data string `json:"data"`
	Cols int    `json:"cols"`
	Rows int    `json:"rows"`
}

// terminalSocket serves the WebSocket. The guard has already refused an Origin other than the
// runtime's own (and, through the relay, any upgrade without exactly the relay's origin); Accept
// checks it again against the Host.
func (s *Server) terminalSocket(w http.ResponseWriter, r *http.Request) {
	t := s.terminal(w, r)
	if t == nil {
		return
	}
	q := r.URL.Query()
	if q.Has("cols") || q.Has("rows") {
		cols, err1 := strconv.Atoi(q.Get("cols"))
		rows, err2 := strconv.Atoi(q.Get("rows"))
		if err1 != nil || err2 != nil || cols < 1 || rows < 1 || badSize(cols, rows) != "" {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("cols must be from 1 to %d and rows from 1 to %d.", termMaxCols, termMaxRows))
			return
		}
		// The screen is sent at the window's size, so it lands where it belongs.
		t.Resize(cols, rows)
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered
	}
	c.SetReadLimit(termReadLimit)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	screen, watch, err := t.Watch()
	if err != nil {
		c.Close(websocket.StatusNormalClosure, "The terminal has ended.")
		return
	}
	defer watch.Stop()
	go s.terminalInput(ctx, cancel, c, t)

	write := func(b []byte) error {
		wctx, wcancel := context.WithTimeout(ctx, termWriteTimeout)
		defer wcancel()
		return c.Write(wctx, websocket.MessageBinary, b)
	}
	if write(screen) != nil {
		return
	}
	ping := time.NewTicker(termPing)
	defer ping.Stop()
	for {
		select {
		case b, ok := <-watch.C:
			if !ok {
				c.Close(websocket.StatusNormalClosure, closeReason(watch.Reason()))
				return
			}
			// Join what is already waiting into one frame: a burst of output is a few frames, not
			// thousands.
		join:
			for len(b) < termFrameMax {
				select {
				case more, ok := <-watch.C:
					if !ok {
						break join
					}
					b = append(b, more...)
				default:
					break join
				}
			}
			if write(b) != nil {
				return
			}
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, termWriteTimeout)
			err := c.Ping(pctx)
			pcancel()
			if err != nil {
				return
			}
		case <-ctx.Done():
			reason := ""
			if cause := context.Cause(ctx); errors.Is(cause, ErrSignedOut) {
				reason = cause.Error() // a phone signed out while its terminal was open
			}
			c.Close(websocket.StatusNormalClosure, reason)
			return
		}
	}
}

// terminalInput reads the client's messages until it goes away or sends one that is not the
// protocol's, which closes the connection saying why.
func (s *Server) terminalInput(ctx context.Context, cancel context.CancelFunc, c *websocket.Conn, t *terminal.Session) {
	defer cancel()
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var m termMessage
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil {
			c.Close(websocket.StatusUnsupportedData, `Send JSON text messages: {"type":"input","data":"…"} or {"type":"resize","cols":…,"rows":…}.`)
			return
		}
		switch m.Type {
		case "input":
			if _, err := t.Write([]byte(m.Data)); err != nil {
				return
			}
		case "resize":
			if m.Cols < 1 || m.Rows < 1 || badSize(m.Cols, m.Rows) != "" {
				c.Close(websocket.StatusPolicyViolation, "A resize needs cols and rows within the terminal's limits.")
				return
			}
			t.Resize(m.Cols, m.Rows)
		default:
			c.Close(websocket.StatusUnsupportedData, fmt.Sprintf("Unknown message type %q; send input or resize.", m.Type))
			return
		}
	}
}

// closeReason fits a reason in a close frame (123 bytes).
func closeReason(s string) string {
	if len(s) > 123 {
		return s[:120] + "…"
	}
	return s
}

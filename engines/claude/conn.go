package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ensemblework/ensemble/engines/agentproc"
)

// The stream-json control protocol, as Claude Code 2.1 speaks it over stdio
// (one JSON object per line, both ways):
//
//	Start:  >> control_request initialize {hooks}       << control_response success {models, account, pid}
//	        >> user {message: the brief}
//	Turn:   << system init, assistant, user (tool results) … result
//	        << control_request can_use_tool {tool_name, input, tool_use_id}
//	        >> control_response success {behavior: allow, updatedInput} | {behavior: deny, message}
//	        << control_request hook_callback {callback_id, input}  >> control_response success {continue: true}
//	        << control_cancel_request {request_id}               (the CLI no longer wants that answer)
//	Stop:   >> control_request interrupt                        << control_response, a result
//	        stdin closed → the CLI exits.
//
// Requests either side sends are correlated by request_id; a response names
// it inside response.request_id.

// maxLine caps one protocol line. Tool results and file contents travel
// inline, so lines are long, but a line past this is a broken peer.
const maxLine = 10 << 20

// controlResponse is the body of a control_response line.
type controlResponse struct {
	Subtype   string          `json:"subtype"` // success, error
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// controlHandler answers the control requests the CLI sends and reads every
// other line. Lines are given to line in the order they arrive, on the
// reading goroutine; control runs on a goroutine of its own per request, so a
// permission waiting for the person does not hold up the stream, and its ctx
// ends when the CLI cancels the request or the connection closes.
type controlHandler interface {
	control(ctx context.Context, subtype string, req json.RawMessage) (any, error)
	line(raw []byte)
	protocolError(text string)
}

// conn is one stream-json connection to a Claude Code process: its stdin as
// out, its stdout given to serve.
type conn struct {
	out  *agentproc.LineWriter
	h    controlHandler
	peer *agentproc.Peer[controlResponse]
	done <-chan struct{} // closed when serve returns
}

func newConn(w io.Writer, h controlHandler) *conn {
	peer := agentproc.NewPeer[controlResponse]()
	return &conn{out: agentproc.NewLineWriter("claude", w), h: h, peer: peer, done: peer.Done()}
}

// errClosed is returned by request once the CLI's output has ended.
var errClosed = agentproc.ErrClosed

// send writes v as one line.
func (c *conn) send(v any) error { return c.out.Send(v) }

// request sends a control request and waits for its response.
func (c *conn) request(ctx context.Context, req map[string]any) (json.RawMessage, error) {
	_, id, answer, err := c.peer.Open("ensemble_")
	if err != nil {
		return nil, err
	}
	if err := c.send(map[string]any{"type": "control_request", "request_id": id, "request": req}); err != nil {
		c.peer.Drop(id)
		return nil, err
	}
	r, err := c.peer.Await(ctx, id, answer)
	if err != nil {
		return nil, err
	}
	if r.Subtype == "error" {
		return nil, fmt.Errorf("claude: %v: %s", req["subtype"], r.Error)
	}
	return r.Response, nil
}

// serve reads lines from r until it ends, then withdraws every control
// request still being answered and waits for those answers to return.
func (c *conn) serve(ctx context.Context, r io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		c.peer.Close()
	}()
	if err := agentproc.ReadLines(r, maxLine, func(line []byte) { c.dispatch(ctx, line) }); err != nil {
		c.h.protocolError(fmt.Sprintf("Claude Code's output could not be read: %v", err))
		return fmt.Errorf("claude: read: %w", err)
	}
	return nil
}

// envelope is the part of a line that routes it.
type envelope struct {
	Type      string           `json:"type"`
	RequestID string           `json:"request_id"`
	Request   json.RawMessage  `json:"request"`
	Response  *controlResponse `json:"response"`
}

func (c *conn) dispatch(ctx context.Context, line []byte) {
	if len(line) == 0 {
		return
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		c.h.protocolError(fmt.Sprintf("Claude Code sent a line that is not JSON: %.200q", line))
		return
	}
	switch env.Type {
	case "control_request":
		c.handleRequest(ctx, env)
	case "control_response":
		if env.Response == nil {
			c.h.protocolError("Claude Code sent a control response without a body.")
			return
		}
		if !c.peer.Resolve(env.Response.RequestID, *env.Response) {
			c.h.protocolError(fmt.Sprintf("Claude Code answered a control request Ensemble never sent (%q).", env.Response.RequestID))
		}
	case "control_cancel_request":
		c.peer.Withdraw(env.RequestID)
	default:
		c.h.line(line)
	}
}

func (c *conn) handleRequest(ctx context.Context, env envelope) {
	var head struct {
		Subtype string `json:"subtype"`
	}
	if env.RequestID == "" || json.Unmarshal(env.Request, &head) != nil || head.Subtype == "" {
		c.h.protocolError("Claude Code sent a control request without an id or subtype.")
		return
	}
	ok := c.peer.Handle(ctx, env.RequestID, func(rctx context.Context) {
		resp, err := c.h.control(rctx, head.Subtype, env.Request)
		if rctx.Err() != nil {
			return // withdrawn by the CLI, or the connection closed: nobody reads an answer
		}
		out := controlResponse{Subtype: "success", RequestID: env.RequestID}
		if err != nil {
			out.Subtype, out.Error = "error", err.Error()
		} else if resp != nil {
			b, merr := json.Marshal(resp)
			if merr != nil {
				out.Subtype, out.Error = "error", merr.Error()
			} else {
				out.Response = b
			}
		}
		if err := c.send(map[string]any{"type": "control_response", "response": out}); err != nil {
			c.h.protocolError(fmt.Sprintf("The answer to Claude Code's %s request could not be sent: %v", head.Subtype, err))
		}
	})
	if !ok {
		c.h.protocolError(fmt.Sprintf("Claude Code sent control request %q twice.", env.RequestID))
	}
}

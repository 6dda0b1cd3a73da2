package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ensemblework/ensemble/engines/agentproc"
)

// The app-server protocol, as codex 0.171 speaks it over stdio: JSON-RPC 2.0
// messages one per line, both ways, without the "jsonrpc" member.
//
//	Start:  >> initialize {clientInfo}   << result {userAgent, codexHome, …}
//	        >> initialized               (a notification)
//	        >> account/read {}           << result {account, requiresOpenaiAuth}
//	        >> thread/start {cwd, approvalPolicy, sandbox, config} | thread/resume {threadId, …}
//	        >> turn/start {threadId, input, effort}
//	Turn:   << item/started, item/completed, item/*/delta, thread/tokenUsage/updated, error …
//	        << item/commandExecution/requestApproval (id 0, 1, …)  >> result {decision: accept | decline}
//	        << serverRequest/resolved {requestId}                (Codex no longer waits for that answer)
//	        << turn/completed {turn: {status, error}}
//	Stop:   >> turn/interrupt {threadId, turnId}; stdin closed → codex exits.
//
// Either side numbers its own requests; a response carries the request's id.

// maxLine caps one protocol line. Command output and diffs travel inline, so
// lines are long, but a line past this is a broken peer.
const maxLine = 10 << 20

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// wireMessage is any line: a request (id and method), a notification
// (method only) or a response (id with result or error).
type wireMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// handler answers what Codex sends. notify runs on the reading goroutine, in
// order; request runs on a goroutine of its own per request, so an approval
// waiting for the person does not hold up the stream, and its ctx ends when
// Codex resolves the request some other way or the connection closes.
type handler interface {
	notify(method string, params json.RawMessage)
	request(ctx context.Context, method string, params json.RawMessage) (any, error)
	protocolError(text string)
}

// conn is one app-server connection: codex's stdin as out, its stdout given
// to serve.
type conn struct {
	out  *agentproc.LineWriter
	h    handler
	peer *agentproc.Peer[wireMessage] // keyed by the request's id as JSON
	done <-chan struct{}              // closed when serve returns
}

func newConn(w io.Writer, h handler) *conn {
	peer := agentproc.NewPeer[wireMessage]()
	return &conn{out: agentproc.NewLineWriter("codex", w), h: h, peer: peer, done: peer.Done()}
}

// errClosed is returned by call once Codex's output has ended.
var errClosed = agentproc.ErrClosed

// send writes v as one line.
func (c *conn) send(v any) error { return c.out.Send(v) }

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	return c.send(m)
}

// call sends a request and waits for its result.
func (c *conn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, key, answer, err := c.peer.Open("")
	if err != nil {
		return nil, err
	}
	if params == nil {
		params = map[string]any{}
	}
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		c.peer.Drop(key)
		return nil, err
	}
	m, err := c.peer.Await(ctx, key, answer)
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, fmt.Errorf("codex: %s: %w", method, m.Error)
	}
	return m.Result, nil
}

// call sends a request and decodes its result into T.
func call[T any](ctx context.Context, c *conn, method string, params any) (T, error) {
	var out T
	raw, err := c.call(ctx, method, params)
	if err != nil {
		return out, err
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &out); err != nil {
			return out, fmt.Errorf("codex: %s: read the answer: %w", method, err)
		}
	}
	return out, nil
}

// withdraw ends the handling of Codex's request id: Codex resolved it some
// other way (the turn was interrupted), so nobody reads the answer.
func (c *conn) withdraw(id json.RawMessage) { c.peer.Withdraw(string(id)) }

// serve reads lines from r until it ends, then withdraws every request still
// being answered and waits for those answers to return.
func (c *conn) serve(ctx context.Context, r io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		c.peer.Close()
	}()
	if err := agentproc.ReadLines(r, maxLine, func(line []byte) { c.dispatch(ctx, line) }); err != nil {
		c.h.protocolError(fmt.Sprintf("Codex's output could not be read: %v", err))
		return fmt.Errorf("codex: read: %w", err)
	}
	return nil
}

func (c *conn) dispatch(ctx context.Context, line []byte) {
	if len(line) == 0 {
		return
	}
	var m wireMessage
	if err := json.Unmarshal(line, &m); err != nil {
		c.h.protocolError(fmt.Sprintf("Codex sent a line that is not JSON: %.200q", line))
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		c.handleRequest(ctx, m)
	case m.Method != "":
		c.h.notify(m.Method, m.Params)
	case hasID:
		var id int64
		if json.Unmarshal(m.ID, &id) != nil || !c.peer.Resolve(strconv.FormatInt(id, 10), m) {
			c.h.protocolError(fmt.Sprintf("Codex answered a request Ensemble never sent (id %s).", m.ID))
		}
	default:
		c.h.protocolError(fmt.Sprintf("Codex sent a message that is neither a request, a notification nor an answer: %.200q", line))
	}
}

func (c *conn) handleRequest(ctx context.Context, m wireMessage) {
	ok := c.peer.Handle(ctx, string(m.ID), func(rctx context.Context) {
		res, err := c.h.request(rctx, m.Method, m.Params)
		if rctx.Err() != nil {
			return // resolved by Codex, or the connection closed: nobody reads an answer
		}
		out := map[string]any{"id": m.ID}
		var re *rpcError
		switch {
		case errors.As(err, &re):
			out["error"] = re
		case err != nil:
			out["error"] = &rpcError{Code: -32603, Message: err.Error()}
		case res == nil:
			out["result"] = map[string]any{}
		default:
			out["result"] = res
		}
		if err := c.send(out); err != nil {
			c.h.protocolError(fmt.Sprintf("The answer to Codex's %s request could not be sent: %v", m.Method, err))
		}
	})
	if !ok {
		c.h.protocolError(fmt.Sprintf("Codex sent request %s twice.", m.ID))
	}
}

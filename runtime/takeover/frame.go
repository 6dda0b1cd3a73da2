package takeover

import (
	"encoding/json"

	"github.com/ensemblework/ensemble/runtime/terminal"
)

// TerminalFrame is a terminal's screen as the page draws it (spec 002 §8.17): the header, and the
// payload of rows as runs. Seq counts the frames of one view from 1; the page says which it has
// drawn with a seen event, so at most two are on their way at once.
type TerminalFrame struct {
	T       string          `json:"t"`    // frame
	Kind    string          `json:"kind"` // terminal
	Seq     int             `json:"seq"`
	Cols    int             `json:"cols"`
	Rows    int             `json:"rows"`
	Cursor  terminal.Cursor `json:"cursor"`
	Title   string          `json:"title"`
	Mode    string          `json:"mode"` // watch, control
	Payload FramePayload    `json:"payload"`
}

// FramePayload is a frame's rows, each as runs of cells that look the same.
type FramePayload struct {
	Rows [][]terminal.Run `json:"rows"`
}

// NewTerminalFrame is f as the frame numbered seq.
func NewTerminalFrame(f terminal.Frame, seq int, mode string) TerminalFrame {
	return TerminalFrame{T: "frame", Kind: "terminal", Seq: seq, Cols: f.Cols, Rows: f.Rows, Cursor: f.Cursor, Title: f.Title,
		Mode: mode, Payload: FramePayload{Rows: f.Lines}}
}

// End tells the page the view has ended, and why.
type End struct {
	T      string `json:"t"` // end
	Reason string `json:"reason"`
}

// Events is what the page sends: {events: [...]}, each an input (node.Input) or {t: "seen", seq}.
type Events struct {
	Events []json.RawMessage `json:"events"`
}

// Start is the page's first message, in the clear: the secret sealed for this computer.
type Start struct {
	Sealed json.RawMessage `json:"sealed"`
}

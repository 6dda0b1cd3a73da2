package node

import (
	"encoding/json"

	"github.com/ensemblework/ensemble/runtime/events"
)

// The kinds of node event (spec 002 §9, GET /api/node/events). Messages, rooms and nodes are
// appended to the event log with the change; status and frames are live only (seq 0): a client
// that missed them reads the room again.
const (
	KindMessage        events.Kind = "node.message"         // a message was posted: Message
	KindMessageUpdated events.Kind = "node.message.updated" // a message changed (a card settled, deleted): Message
	KindStatus         events.Kind = "node.status"          // a node is thinking, waiting or idle: Status
	KindFrame          events.Kind = "node.frame"           // a piece of a reply being written: Frame
	KindRoom           events.Kind = "node.room"            // a room was made, changed or deleted: RoomChanged
	KindNode           events.Kind = "node.node"            // a node was made, changed or deleted: NodeChanged
)

// EventSpecs lists the node events, for the catalog.
func EventSpecs() []events.Spec {
	return append([]events.Spec{
		{Kind: KindMessage, Payload: Message{}, Doc: "a message was posted in a node room"},
		{Kind: KindMessageUpdated, Payload: Message{}, Doc: "a message changed: a card settled, a message deleted"},
		{Kind: KindStatus, Payload: Status{}, Doc: "a node is thinking, waiting for a card, or idle (live only)"},
		{Kind: KindFrame, Payload: Frame{}, Doc: "a piece of a node's reply as it is written (live only)"},
		{Kind: KindRoom, Payload: RoomChanged{}, Doc: "a node room was made, changed or deleted"},
		{Kind: KindNode, Payload: NodeChanged{}, Doc: "a node was made, changed or deleted"},
		{Kind: KindComputerTool, Payload: ComputerTool{}, Doc: "a node used a tool on its owner's computer: the tool, folder and program, never the output"},
		{Kind: KindBrowserTool, Payload: BrowserTool{}, Doc: "a node used the browser or a capture tool, or a sign-in it handed its owner ended: the tool, tab and site, never page text or what was typed"},
	}, liveEventSpecs()...)
}

// Status is what a node is doing in a room.
type Status struct {
	RoomID string `json:"roomId"`
	NodeID string `json:"nodeId"`
	State  string `json:"state"` // thinking, waiting, idle
	CardID string `json:"cardId,omitempty"`
	// Private: the turn's thread is the person's own ("Only me").
	Private bool   `json:"private"`
	TurnID  string `json:"turnId,omitempty"`
}

// Frame is one piece of a turn as it happens: its text ("text"), a tool chip ("tool"), or the
// records it knows ("refs").
type Frame struct {
	RoomID  string          `json:"roomId"`
	NodeID  string          `json:"nodeId"`
	TurnID  string          `json:"turnId"`
	Private bool            `json:"private"`
	Type    string          `json:"type"`
	Text    string          `json:"text,omitempty"`
	Tool    json.RawMessage `json:"tool,omitempty"`
	Refs    json.RawMessage `json:"refs,omitempty"`
}

// RoomChanged says a room changed.
type RoomChanged struct {
	ID     string `json:"id"`
	Change string `json:"change"` // created, updated, deleted
}

// NodeChanged says a node changed.
type NodeChanged struct {
	ID     string `json:"id"`
	Change string `json:"change"` // created, updated, deleted
}

// live publishes an event that is not kept: seq 0, which a stream sends without an id.
func (s *Service) live(kind events.Kind, subject string, data any) {
	if s.cfg.Bus == nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	s.cfg.Bus.Publish(events.Event{At: s.now(), Kind: kind, Subject: subject, Data: b})
}

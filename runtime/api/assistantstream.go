package api

import (
	"errors"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The turn stream (POST /api/assistant/turn): one server-sent event per piece of a turn, named by
// its kind, its data one of the structs below as JSON. docs/assistant-turn.md is the client
// author's account of it; TestTurnStreamDoc checks it names every kind, field and error kind here.
//
//	conversation → refs → (text | tool)* → done
//	                                     → error   (instead of done, for a turn that failed)

// turnEventError ends a turn that failed, instead of "done".
const turnEventError = "error"

type (
	turnConversation struct {
		ConversationID string `json:"conversationId"`
	}
	turnRefs struct {
		Refs []tools.Ref `json:"refs"`
	}
	turnText struct {
		Text string `json:"text"`
	}
	turnTool struct {
		Tool *assistant.ToolRow `json:"tool"`
	}
	turnDone struct {
		Reply *assistant.Reply `json:"reply"`
	}
	turnError struct {
		Error string `json:"error"`
		Kind  string `json:"kind"`
	}
)

// turnEvents is the data of each kind of event the stream sends.
var turnEvents = map[string]any{
	assistant.EventConversation: turnConversation{},
	assistant.EventRefs:         turnRefs{},
	assistant.EventText:         turnText{},
	assistant.EventTool:         turnTool{},
	assistant.EventDone:         turnDone{},
	turnEventError:              turnError{},
}

// The kinds of a failed turn (the error event's kind).
const (
	errorFailed  = "failed"  // the model or the assistant could not answer
	errorTimeout = "timeout" // the model did not answer within its limit
	errorStopped = "stopped" // Stop, or the runtime closing
	errorCutOff  = "cutoff"  // the model's stream broke off; the text that came stays
)

// turnErrorKinds are the kinds an error event may have.
var turnErrorKinds = []string{errorFailed, errorTimeout, errorStopped, errorCutOff}

// turnEventData is the data an assistant event is streamed with, and whether it is streamed.
func turnEventData(e assistant.Event) (any, bool) {
	switch e.Type {
	case assistant.EventConversation:
		return turnConversation{ConversationID: e.ConversationID}, true
	case assistant.EventRefs:
		refs := e.Refs
		if refs == nil {
			refs = []tools.Ref{}
		}
		return turnRefs{Refs: refs}, true
	case assistant.EventText:
		return turnText{Text: e.Text}, true
	case assistant.EventTool:
		return turnTool{Tool: e.Tool}, true
	case assistant.EventDone:
		return turnDone{Reply: e.Reply}, true
	}
	return nil, false
}

// turnErrorKind says what kind of failure ended a turn.
func turnErrorKind(err error) string {
	switch {
	case models.IsTimeout(err):
		return errorTimeout
	case models.IsCutOff(err):
		return errorCutOff
	case errors.Is(err, assistant.ErrStopped):
		return errorStopped
	}
	return errorFailed
}

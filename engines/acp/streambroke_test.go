package acp

import (
	"errors"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

func TestStreamBroke(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&acpsdk.RequestError{Code: -32603, Message: "terminated"}, true},
		{&acpsdk.RequestError{Code: -32603, Message: "Internal error: terminated"}, true},
		{&acpsdk.RequestError{Code: -32603, Message: "Internal error: Connection reset by server"}, true},
		{&acpsdk.RequestError{Code: -32603, Message: "The socket connection was closed unexpectedly. For more information, pass `verbose: true`"}, true},
		{&acpsdk.RequestError{Code: -32603, Message: "read ECONNRESET"}, true},
		{&acpsdk.RequestError{Code: -32603, Message: "other side closed"}, true},
		{&acpsdk.RequestError{Code: -32603, Message: "Internal error: model not found"}, false},
		{&acpsdk.RequestError{Code: -32603, Message: "undetermined"}, false},
		{errors.New("terminated"), false}, // not the agent's answer: the pipe itself
	} {
		if got := streamBroke(tc.err); got != tc.want {
			t.Errorf("streamBroke(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

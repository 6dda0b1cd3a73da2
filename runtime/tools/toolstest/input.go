package toolstest

import (
	"encoding/json"
	"testing"
)

// Input is a tool's input as JSON: a string as it is, anything else marshalled.
func Input(t testing.TB, input any) json.RawMessage {
	t.Helper()
	if s, ok := input.(string); ok {
		return json.RawMessage(s)
	}
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

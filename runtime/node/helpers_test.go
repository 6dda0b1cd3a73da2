package node

import (
	"encoding/json"
	"testing"

	"github.com/ensemblework/ensemble/runtime/assistant"
)

func assistantChange(policy string) assistant.SettingsChange {
	return assistant.SettingsChange{WritePolicy: &policy}
}

func jsonUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

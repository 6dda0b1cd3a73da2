package node

import (
	"encoding/json"
	"testing"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/needs"
)

func assistantChange(policy string) assistant.SettingsChange {
	return assistant.SettingsChange{WritePolicy: &policy}
}

func jsonUnmarshal(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func needsChoose(i int) needs.Answer { return needs.Choose(i) }

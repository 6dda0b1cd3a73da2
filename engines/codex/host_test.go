package codex

import (
	"log/slog"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// The stand-in host every driver test uses.
type fakeHost = enginetest.Host

func newFakeHost() *fakeHost { return enginetest.NewHost() }

func testLogger(t *testing.T) *slog.Logger { return enginetest.TestLogger(t) }

package toolstest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Records opens a new database in a test's folder with the ledger and the records over it, closed
// when the test ends: what every tool's test stands on.
func Records(t testing.TB) (*store.Store, *ledger.Writer, *records.Service) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	t.Cleanup(func() { bus.Close(); st.Close() })
	w := ledger.New(st, bus)
	return st, w, records.New(st, w)
}

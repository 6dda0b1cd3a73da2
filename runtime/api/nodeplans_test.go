package api

import (
	"strings"
	"testing"
)

// The plan routes answer an unknown plan with one sentence and a 404.
func TestNodePlanRoutesRefuseUnknown(t *testing.T) {
	f := newNodeFixture(t)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/node/plans/msn_nope"},
		{"POST", "/api/node/plans/msn_nope/stop"},
	} {
		code, out := f.call(t, c.method, c.path, "")
		if code != 404 || !strings.Contains(out["error"].(string), `There is no plan "msn_nope".`) {
			t.Errorf("%s %s: %d %v; want 404 There is no plan", c.method, c.path, code, out)
		}
	}
}

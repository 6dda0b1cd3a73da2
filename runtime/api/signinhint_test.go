package api

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestSignInHintsNameTheCommand: the pages that say how to sign in name the command that runs
// Ensemble here (Options.Command), and "ensemble" when none is given.
func TestSignInHintsNameTheCommand(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{"", "ensemble open"},
		{"/home/ada/src/ensemble/bin/ensemble", "/home/ada/src/ensemble/bin/ensemble open"},
	} {
		f := newFixture(t)
		f.api.opts.Command = tc.command

		if code, out := f.call(t, "GET", "/api/tasks", "", "Authorization", ""); code != 401 || !strings.Contains(out["error"].(string), "`"+tc.want+"`") {
			t.Errorf("%q: the 401 sentence: %d %v, want it to name `%s`", tc.command, code, out, tc.want)
		}

		resp, err := http.Get(f.srv.URL + "/auth/signin?code=spent")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(string(page), "<code>"+tc.want+"</code>") {
			t.Errorf("%q: the used link's page: %d %s, want it to name %s", tc.command, resp.StatusCode, page, tc.want)
		}

		b := f.signIn(t, false)
		code, out := f.asBrowser(t, b, "POST", "/api/signout", "")
		if s, _ := out["signIn"].(string); code != 200 || !strings.Contains(s, "`"+tc.want+"`") {
			t.Errorf("%q: sign out: %d %v, want signIn to name `%s`", tc.command, code, out, tc.want)
		}
	}
}

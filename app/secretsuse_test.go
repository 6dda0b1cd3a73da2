package app

import (
	"regexp"
	"strings"
	"testing"
)

// allow and mode go through the running runtime; list says where each secret is used.
func TestSecretsAllowAndMode(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	if code, out := ensembleIn(t, "tok-value-0123456789\n", data, "secrets", "set", "GH_PAT", "--allow", "https://github.com"); code != 0 {
		t.Fatalf("set: %q", out)
	}
	if code, out := ensembleIn(t, "env-value-0123456789\n", data, "secrets", "set", "MY_ENV"); code != 0 {
		t.Fatalf("set: %q", out)
	}
	code, out := ensembleIn(t, "", data, "secrets", "list")
	if code != 0 || !regexp.MustCompile(`GH_PAT\s+run\s+https://github.com\s+git to https://github.com \(as x-access-token\); secret_http`).MatchString(out) ||
		!regexp.MustCompile(`MY_ENV\s+run\s+\(nowhere\)\s+runs' environment \(\$MY_ENV\)`).MatchString(out) || !strings.Contains(out, "Mode all:") {
		t.Fatalf("list: %d %q", code, out)
	}
	code, out = ensembleIn(t, "", data, "secrets", "allow", "GH_PAT", "--env", "on", "--git-user", "me")
	if code != 0 || !strings.Contains(out, "GH_PAT is used: runs' environment ($GH_PAT); git to https://github.com (as me); secret_http.") {
		t.Fatalf("allow: %d %q", code, out)
	}
	code, out = ensembleIn(t, "", data, "secrets", "mode", "named", "GH_PAT")
	if code != 0 || !strings.Contains(out, "Mode named: a run that names no secrets gets GH_PAT") {
		t.Fatalf("mode: %d %q", code, out)
	}
	if code, out = ensembleIn(t, "", data, "secrets", "mode"); code != 0 || !strings.Contains(out, "gets GH_PAT") {
		t.Fatalf("mode shown: %d %q", code, out)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing to change", []string{"secrets", "allow", "GH_PAT"}, "Say what to change"},
		{"bad on/off", []string{"secrets", "allow", "GH_PAT", "--env", "yes"}, `--env takes on or off, not "yes".`},
		{"origins and none", []string{"secrets", "allow", "GH_PAT", "https://x.example", "--none"}, "not both"},
		{"git without origins", []string{"secrets", "allow", "MY_ENV", "--git", "on"}, "allow one first"},
		{"unknown secret", []string{"secrets", "allow", "NOPE", "--env", "on"}, "There is no secret named NOPE"},
		{"unknown mode", []string{"secrets", "mode", "some"}, `The mode is all or named, not "some".`},
		{"names with all", []string{"secrets", "mode", "all", "GH_PAT"}, "name secrets with mode named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := ensembleIn(t, "", append([]string{data}, tc.args...)...)
			if code != 1 || !strings.Contains(out, tc.want) {
				t.Fatalf("got %d %q, want %q", code, out, tc.want)
			}
		})
	}
	for _, help := range [][]string{{"secrets", "allow", "--help"}, {"secrets", "mode", "--help"}} {
		if code, out := ensembleIn(t, "", help...); code != 0 || !strings.Contains(out, "Example") {
			t.Errorf("%v: %d %q", help, code, out)
		}
	}
	// The helper answers nothing for a token no run has, and ignores store and erase.
	url := rt.URL + "/api/engine/git-credential"
	if code, out := ensembleIn(t, "protocol=https\nhost=github.com\n\n", "git-credential", "--url", url, "--token", "ens_git_00", "get"); code != 0 || out != "" {
		t.Errorf("helper with no run: %d %q", code, out)
	}
	if code, out := ensembleIn(t, "protocol=https\nhost=github.com\n\n", "git-credential", "store"); code != 0 || out != "" {
		t.Errorf("helper store: %d %q", code, out)
	}
}

func TestGitHelperFor(t *testing.T) {
	got := gitHelperFor("/Apps/It's here/ensemble", "http://127.0.0.1:4000")("ens_git_ab")
	want := `!'/Apps/It'\''s here/ensemble' git-credential --url 'http://127.0.0.1:4000/api/engine/git-credential' --token ens_git_ab`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

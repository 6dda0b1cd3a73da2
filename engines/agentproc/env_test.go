package agentproc

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestHostSession(t *testing.T) {
	for name, want := range map[string]bool{
		"CLAUDECODE": true, "CLAUDE_CODE_SESSION_ID": true, "AI_AGENT": true, "ENSEMBLE_INTERNAL_TOKEN": true,
		"ENSEMBLE_DESKTOP_TOKEN": true, "CLAUDE_CODE_HOST_X": true, "CLAUDE_CODE_DESKTOP_Y": true,
		"CLAUDE_CODE_SDK_HAS_Z": true, "CLAUDE_AGENT_SDK_VERSION": true,
		"ANTHROPIC_API_KEY": false, "HOME": false, "CLAUDE_CODE_USE_BEDROCK": false, "CLAUDECODEX": false,
	} {
		if got := HostSession(name); got != want {
			t.Errorf("HostSession(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestEnv(t *testing.T) {
	drop := func(k string) bool { return HostSession(k) || k == "SECRET" }
	home := "HOME=/home/me"
	if runtime.GOOS == "windows" {
		home = "HOME=/home/me\nUSERPROFILE=/home/me"
	}
	for _, c := range []struct {
		name       string
		base       []string
		drop       func(string) bool
		home, path string
		extra      []map[string]string
		want       string // the variables, one a line
	}{
		{
			name: "host session and dropped variables go",
			base: []string{"A=1", "CLAUDECODE=1", "CLAUDE_CODE_HOST_X=2", "SECRET=s", "ENSEMBLE_INTERNAL_TOKEN=t", "B=2"},
			drop: drop,
			want: "A=1\nB=2",
		},
		{
			name: "nil drops nothing",
			base: []string{"CLAUDECODE=1", "SECRET=s"},
			want: "CLAUDECODE=1\nSECRET=s",
		},
		{
			name: "entries without = are left out, the last value wins in the first place",
			base: []string{"A=1", "junk", "B=2", "A=3"},
			want: "A=3\nB=2",
		},
		{
			name: "HOME and PATH replace base's in place",
			base: []string{"PATH=/bad", "HOME=/elsewhere", "K=v"},
			home: "/home/me", path: "/usr/bin",
			want: "PATH=/usr/bin\n" + home + "\nK=v",
		},
		{
			name: "HOME and PATH follow base, then extra sorted, each map in turn",
			base: []string{"K=v"},
			home: "/home/me", path: "/usr/bin",
			extra: []map[string]string{{"Z": "1", "A": "2"}, {"B": "3", "Z": "4"}},
			want:  "K=v\n" + home + "\nPATH=/usr/bin\nA=2\nZ=4\nB=3",
		},
		{
			name:  "extra puts back what base lost",
			base:  []string{"SECRET=from-base", "K=v"},
			drop:  drop,
			extra: []map[string]string{{"SECRET": "asked"}},
			want:  "K=v\nSECRET=asked",
		},
		{
			name:  "nothing is an empty environment, not an inherited one",
			extra: []map[string]string{nil},
			want:  "",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Env(c.base, c.drop, c.home, c.path, c.extra...)
			if got == nil {
				t.Fatal("got nil, which exec reads as this process's environment")
			}
			if s := strings.Join(got, "\n"); s != c.want {
				t.Errorf("got\n%s\nwant\n%s", s, c.want)
			}
		})
	}
}

func TestConfigDir(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/home/ada"}, "/home/ada/.codex"},
		{[]string{"HOME=/home/ada", "CODEX_HOME=/srv/codex"}, "/srv/codex"},
		{[]string{"CODEX_HOME=/srv/codex", "HOME=/home/ada"}, "/srv/codex"},
		{[]string{"PATH=/bin"}, ""},
	} {
		if got := ConfigDir(tc.env, "CODEX_HOME", ".codex"); got != filepath.FromSlash(tc.want) && got != tc.want {
			t.Errorf("ConfigDir(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

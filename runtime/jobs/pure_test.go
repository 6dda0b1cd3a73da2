package jobs

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/judge"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "nothing secret here", "nothing secret here"},
		{"openai", "key sk-proj-abcdefghijklmnopqrstuv1234 ok", "key [redacted] ok"},
		{"anthropic", "ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuvwx", "ANTHROPIC=[redacted]"},
		{"github", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token [redacted]"},
		{"github pat", "github_pat_11ABCDEFGHIJKLMNOPQRSTUV_xyz", "[redacted]"},
		{"aws", "id AKIAIOSFODNN7EXAMPLE here", "id [redacted] here"},
		{"bearer", "Authorization: Bearer abcdef123456789xyz", "Authorization: Bearer [redacted]"},
		{"password", "password=hunter2secret", "password=[redacted]"},
		{"json secret", `{"api_key": "abcd1234efgh"}`, `{"api_key": "[redacted]"}`},
		{"url credentials", "git clone https://me:s3cr3tpass@github.com/a/b", "git clone https://me:[redacted]@github.com/a/b"},
		{"private key", "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nb", "a\n[redacted]\nb"},
		{"cut private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow", "[redacted]"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[redacted]"},
		{"short words stay", "the token is in the vault", "the token is in the vault"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"ééééééé", 4, "ééé…"},
		{"password=abcdefgh and more", 14, "password=[red…"},
	} {
		if got := trim(tc.in, tc.n); got != tc.want {
			t.Errorf("trim(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	long := `{"command": "` + strings.Repeat("a", 1000) + `"}`
	if got := inputPreview(json.RawMessage(long)); len([]rune(got)) != previewInput || !strings.HasPrefix(got, `{"command":"aaa`) {
		t.Errorf("inputPreview = %d characters: %.40q", len([]rune(got)), got)
	}
	if got := inputPreview(json.RawMessage(`"just text"`)); got != "just text" {
		t.Errorf("inputPreview(string) = %q", got)
	}
}

func TestSettingsResolve(t *testing.T) {
	s := func(v string) *string { return &v }
	b := func(v bool) *bool { return &v }
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		name string
		in   SettingsInput
		want Settings
		err  string
	}{
		{"defaults", SettingsInput{}, DefaultSettings(), ""},
		{"all set", SettingsInput{Mode: s("unattended"), Trusted: b(true), Sandbox: b(false), Outside: s("none"),
			Git: s("any"), AskBeforeCommit: b(true), Internet: b(false), MaxMinutes: n(30), MaxTurns: n(50),
			Model: s(" opus "), Effort: s("high"), ContextTier: s("long"), Fast: b(true)},
			Settings{Mode: judge.ModeUnattended, Trusted: true, Outside: judge.OutsideNone, Git: judge.GitAny,
				AskBeforeCommit: true, MaxMinutes: 30, MaxTurns: 50, Model: "opus", Effort: "high", ContextTier: "long", Fast: true}, ""},
		{"standard window", SettingsInput{ContextTier: s("standard")}, DefaultSettings(), ""},
		{"bad window", SettingsInput{ContextTier: s("huge")}, Settings{}, "Context window \"huge\" is not one of standard or long."},
		{"bad mode", SettingsInput{Mode: s("yolo")}, Settings{}, "Mode \"yolo\""},
		{"bad git", SettingsInput{Git: s("push")}, Settings{}, "Git permission"},
		{"bad outside", SettingsInput{Outside: s("all")}, Settings{}, "Outside access"},
		{"negative minutes", SettingsInput{MaxMinutes: n(-1)}, Settings{}, "minutes limit"},
		{"model with space", SettingsInput{Model: s("a b")}, Settings{}, "model"},
		{"secrets named once each", SettingsInput{Secrets: &[]string{"STRIPE_KEY", " GH_PAT", "STRIPE_KEY"}},
			func() Settings { d := DefaultSettings(); d.Secrets = []string{"STRIPE_KEY", "GH_PAT"}; return d }(), ""},
		{"no secrets named is none", SettingsInput{Secrets: &[]string{}}, DefaultSettings(), ""},
		{"a reserved secret name", SettingsInput{Secrets: &[]string{"PATH"}}, Settings{}, "PATH is reserved"},
		{"not a secret name", SettingsInput{Secrets: &[]string{"a-b"}}, Settings{}, "not an environment variable name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.Resolve()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

func TestJudgeSettings(t *testing.T) {
	p := Places{Home: "/home/me/", DataDir: "/home/me/.ensemble", Workspace: "/home/me/.ensemble/workspace"}
	kept := judge.Kept{Edits: true}
	set := Settings{Mode: judge.ModeReview, Trusted: true, Sandbox: true, Outside: judge.OutsideReadWrite,
		Git: judge.GitCommit, AskBeforeCommit: true, Internet: true}
	for _, tc := range []struct {
		kind    FolderKind
		trusted bool
	}{{FolderNamed, true}, {FolderWorktree, false}, {FolderWorkspace, false}} {
		got := JudgeSettings(set, tc.kind, "/home/me/code/app/", p, kept)
		if got.Trusted != tc.trusted {
			t.Errorf("%s: trusted = %v, want %v", tc.kind, got.Trusted, tc.trusted)
		}
		if got.Folder != "/home/me/code/app" || got.Home != "/home/me" || got.DataDir != p.DataDir ||
			got.Workspace != p.Workspace || got.Mode != judge.ModeReview || got.Git != judge.GitCommit ||
			!got.AskBeforeCommit || !got.Internet || !got.Sandbox || got.Outside != judge.OutsideReadWrite || !got.Kept.Edits {
			t.Errorf("%s: settings = %+v", tc.kind, got)
		}
	}
}

// TestOwnServerName: the judge passes the run's own tools by the name the engines give the run's
// server, and neither is the name `ensemble mcp setup` gives the person's own entry.
func TestOwnServerName(t *testing.T) {
	if judge.OwnServer != engines.OwnServer || engines.OwnServer == "ensemble" {
		t.Errorf("judge.OwnServer %q, engines.OwnServer %q", judge.OwnServer, engines.OwnServer)
	}
}

func TestJudgeCall(t *testing.T) {
	for _, tc := range []struct {
		in   engines.ToolCall
		want judge.Call
	}{
		{engines.ToolCall{Tool: "Bash", Kind: "shell", Command: "ls", Cwd: "/x"}, judge.Call{Tool: judge.ToolShell, Command: "ls", Cwd: "/x"}},
		{engines.ToolCall{Tool: "Read", Kind: "read", Paths: []string{"/a"}}, judge.Call{Tool: judge.ToolRead, Paths: []string{"/a"}}},
		{engines.ToolCall{Tool: "mcp__github__create_issue"}, judge.Call{Tool: judge.ToolMCP, Server: "github", Name: "create_issue"}},
		{engines.ToolCall{Tool: "WebFetch", Kind: "fetch", URL: "https://x.dev"}, judge.Call{Tool: judge.ToolFetch, URL: "https://x.dev"}},
		{engines.ToolCall{Tool: "mcp__" + engines.OwnServer + "__ask_person"}, judge.Call{Tool: judge.ToolMCP, Server: judge.OwnServer, Name: "ask_person"}},
	} {
		got := JudgeCall(tc.in)
		if got.Tool != tc.want.Tool || got.Command != tc.want.Command || got.Cwd != tc.want.Cwd ||
			!slices.Equal(got.Paths, tc.want.Paths) || got.URL != tc.want.URL || got.Server != tc.want.Server || got.Name != tc.want.Name {
			t.Errorf("JudgeCall(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestQueueOrder(t *testing.T) {
	q := newQueue()
	steps := []struct {
		op, id, key string
		want        string // add: "go" or "wait"; remove: the next job
	}{
		{"add", "a", "/x", "go"},
		{"add", "b", "/x", "wait"},
		{"add", "c", "/y", "go"},
		{"add", "d", "/x", "wait"},
		{"add", "e", "/x", "wait"},
		{"remove", "d", "/x", ""}, // leaves the line without starting anything
		{"remove", "a", "/x", "b"},
		{"remove", "c", "/y", ""},
		{"remove", "b", "/x", "e"},
		{"remove", "e", "/x", ""},
		{"add", "f", "/x", "go"},
	}
	for i, s := range steps {
		var got string
		if s.op == "add" {
			got = map[bool]string{true: "go", false: "wait"}[q.add(s.id, s.key)]
		} else {
			got = q.remove(s.id, s.key)
		}
		if got != s.want {
			t.Fatalf("step %d (%s %s): got %q, want %q", i, s.op, s.id, got, s.want)
		}
	}
	if q.position("f", "/x") != 0 || q.position("zz", "/x") != -1 {
		t.Errorf("positions wrong")
	}
}

package sandbox

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

func TestRulesOrder(t *testing.T) {
	sb := engines.Sandbox{
		Write:     []string{"/data/workspace/runs/x", "/tmp/run", "relative", "/data/workspace/runs/x/"},
		DenyRead:  []string{"/data", "/home/me/.ssh"},
		DenyWrite: []string{"/data/workspace/runs/x/.git/hooks"},
		AllowRead: []string{"/data/workspace/skills"},
	}
	got := rules(sb, Extra{Write: []string{"/home/me/.local/share/opencode"}, Scratch: map[string]string{"/home/me/.config/opencode": "/run/tmp/config"}})
	want := []rule{
		{path: "/data", acc: denyRead},
		{path: "/tmp/run", acc: write},
		{path: "/data/workspace/skills", acc: allowRead},
		{path: "/home/me/.ssh", acc: denyRead},
		{path: "/data/workspace/runs/x", acc: write},
		{path: "/home/me/.config/opencode", acc: scratch, from: "/run/tmp/config"},
		{path: "/home/me/.local/share/opencode", acc: write},
		{path: "/data/workspace/runs/x/.git/hooks", acc: denyWrite},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rules:\n got %v\nwant %v", got, want)
	}
	// The same path with two rules: the stricter one comes last and wins, but reading never
	// narrows writing.
	got = rules(engines.Sandbox{Write: []string{"/a", "/b"}, DenyRead: []string{"/a"}, AllowRead: []string{"/b"}}, Extra{})
	if want := []rule{{path: "/a", acc: write}, {path: "/a", acc: denyRead}, {path: "/b", acc: allowRead}, {path: "/b", acc: write}}; !reflect.DeepEqual(got, want) {
		t.Errorf("same path: got %v, want %v", got, want)
	}
}

func TestBwrapArgs(t *testing.T) {
	files := map[string]kind{"/data": dir, "/data/workspace/runs/x": dir, "/home/me/.netrc": file, "/home/me/.ssh": dir}
	stat := func(p string) kind { return files[p] }
	same := func(p string) string { return p }
	sb := engines.Sandbox{On: true,
		Write:    []string{"/data/workspace/runs/x", "/not/there"},
		DenyRead: []string{"/data", "/home/me/.ssh", "/home/me/.netrc"},
	}
	got := strings.Join(bwrapArgs(sb, Extra{Scratch: map[string]string{"/home/me/.ssh": "/elsewhere"}}, "/data/workspace/runs/x", []string{"/bin/agent", "acp"}, stat, same), " ")
	for _, want := range []string{
		"--unshare-user", "--unshare-pid", "--die-with-parent", "--ro-bind / /", "--dev /dev", "--proc /proc", "--tmpfs /tmp",
		"--tmpfs /data --ro-bind /dev/null /home/me/.netrc --tmpfs /home/me/.ssh --bind /elsewhere /home/me/.ssh --bind /data/workspace/runs/x /data/workspace/runs/x",
		"--remount-ro /data --chdir",
		"--chdir /data/workspace/runs/x -- /bin/agent acp",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("bwrap args lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "/not/there") {
		t.Errorf("a folder that does not exist is mounted: %s", got)
	}
	if strings.Contains(got, "--unshare-net") {
		t.Errorf("the agent must reach its model: %s", got)
	}
}

func TestSeatbeltProfile(t *testing.T) {
	sb := engines.Sandbox{On: true, Write: []string{"/Users/me/work"}, DenyRead: []string{"/Users/me/.ssh", `/Users/me/we"ird`}}
	list := func(string) []string { return []string{"/Users/me/.config/opencode/opencode.json"} }
	got := seatbeltProfile(sb, Extra{Write: []string{"/Users/me/.local/share/opencode"}, Scratch: map[string]string{"/Users/me/.config/opencode": "/x"}},
		func(p string) string { return p }, list)
	for _, want := range []string{
		"(version 1)\n(allow default)\n(deny file-write*)\n",
		`(allow file-read* file-write* (subpath "/Users/me/work"))`,
		`(allow file-read* file-write* (subpath "/Users/me/.local/share/opencode"))`,
		`(deny file-read* file-write* (subpath "/Users/me/.ssh"))`,
		`(subpath "/Users/me/we\"ird")`,
		"(deny process-info* (target others))",
		"(allow file-write* (subpath \"/Users/me/.config/opencode\"))\n(deny file-write* (subpath \"/Users/me/.config/opencode/opencode.json\"))",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("profile lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "(deny file-write*)") > strings.Index(got, "/Users/me/work") {
		t.Errorf("the writable folder must come after the general refusal (the later rule wins):\n%s", got)
	}
}

func TestCheck(t *testing.T) {
	have := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			for _, h := range names {
				if h == n {
					return "/usr/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	works := func(context.Context, string) error { return nil }
	denied := func(context.Context, string) error { return errors.New("bwrap: setting up uid map: Permission denied") }
	sysctls := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		name     string
		sys      System
		programs []string
		want     string // "" for no error
	}{
		{"linux ok", System{GOOS: "linux", Look: have("bwrap", "socat"), Try: works, Sysctl: sysctls(nil)}, []string{"bwrap", "socat"}, ""},
		{"no bwrap or socat", System{GOOS: "linux", Look: have(), Try: works, Sysctl: sysctls(nil)}, []string{"bwrap", "socat"},
			"Claude Code's sandbox needs bwrap and socat, which this computer does not have: install bubblewrap and socat (`sudo apt install bubblewrap socat`), or turn the sandbox off for this run"},
		{"no socat", System{GOOS: "linux", Look: have("bwrap"), Try: works, Sysctl: sysctls(nil)}, []string{"bwrap", "socat"},
			"install socat (`sudo apt install socat`)"},
		{"apparmor", System{GOOS: "linux", Look: have("bwrap", "socat"), Try: denied,
			Sysctl: sysctls(map[string]string{"kernel.apparmor_restrict_unprivileged_userns": "1"})}, []string{"bwrap", "socat"},
			"kernel.apparmor_restrict_unprivileged_userns is 1"},
		{"namespaces off", System{GOOS: "linux", Look: have("bwrap"), Try: denied,
			Sysctl: sysctls(map[string]string{"user.max_user_namespaces": "0"})}, []string{"bwrap"}, "user.max_user_namespaces is 0"},
		{"bwrap fails otherwise", System{GOOS: "linux", Look: have("bwrap"), Try: denied, Sysctl: sysctls(nil)}, []string{"bwrap"},
			"cannot start bubblewrap here (bwrap: setting up uid map: Permission denied); or turn the sandbox off"},
		{"no tun", System{GOOS: "linux", Look: have("bwrap", "slirp4netns"), Try: works, Sysctl: sysctls(nil), Exists: func(string) bool { return false }},
			[]string{"bwrap", "slirp4netns"}, "needs /dev/net/tun"},
		{"own bubblewrap, namespaces allowed", System{GOOS: "linux", Look: have(), Sysctl: sysctls(nil)}, nil, ""},
		{"own bubblewrap, apparmor", System{GOOS: "linux", Look: have(), Sysctl: sysctls(map[string]string{"kernel.apparmor_restrict_unprivileged_userns": "1"})},
			nil, "kernel.apparmor_restrict_unprivileged_userns is 1"},
		{"own bubblewrap, apparmor, root", System{GOOS: "linux", Look: have(), Root: true,
			Sysctl: sysctls(map[string]string{"kernel.apparmor_restrict_unprivileged_userns": "1"})}, nil, ""},
		{"windows", System{GOOS: "windows"}, nil, "does not run on Windows itself: run Ensemble in WSL, or turn the sandbox off"},
		{"mac", System{GOOS: "darwin", Look: have("sandbox-exec")}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.sys.Check(context.Background(), "Claude Code's sandbox", c.programs...)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, engines.ErrNoSandbox) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check: %v, want ErrNoSandbox saying %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "Claude Code's sandbox ") || !strings.HasSuffix(err.Error(), ".") {
				t.Errorf("not a sentence of its own: %q", err)
			}
		})
	}
}

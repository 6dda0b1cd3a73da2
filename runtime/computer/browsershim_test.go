package computer

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOpenableURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://github.com/login/device", true},
		{"https://login.microsoftonline.com/organizations/oauth2/v2.0/authorize?redirect_uri=http%3A%2F%2Flocalhost%3A8400", true},
		{"http://localhost:8400/callback?code=x", true},
		{"http://127.0.0.1:9000/", true},
		{"https://[::1]:8443/", true},
		{"http://example.com/login", false}, // the public web only over https
		{"https://192.168.1.1/admin", false},
		{"https://10.0.0.5/", false},
		{"https://169.254.169.254/latest/meta-data", false},
		{"https://router.local/", false},
		{"https://intranet/", false},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
		{"ftp://example.com/", false},
	}
	for _, tt := range tests {
		if why := OpenableURL(tt.url); (why == "") != tt.ok {
			t.Errorf("OpenableURL(%q) = %q; want open %v", tt.url, why, tt.ok)
		}
	}
}

// heard collects what a command's hooks heard.
type heard struct {
	urls  chan string
	codes chan DeviceCode
	ended chan Result
}

func newHeard() *heard {
	return &heard{urls: make(chan string, 8), codes: make(chan DeviceCode, 8), ended: make(chan Result, 1)}
}

func (h *heard) request(f *fixture, command string) RunRequest {
	return RunRequest{NodeID: "n1", Folder: f.own, Command: command,
		OnBrowserURL: func(id, u string) { h.urls <- u },
		OnDeviceCode: func(id string, dc DeviceCode) { h.codes <- dc },
		Finished:     func(r Result) { h.ended <- r }}
}

func (h *heard) end(t *testing.T) Result {
	t.Helper()
	select {
	case r := <-h.ended:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the command's end was never heard")
	}
	return Result{}
}

// urlsHeard is every address heard by the command's end (the helper's folder is read once more
// as it ends).
func (h *heard) urlsHeard() []string {
	var out []string
	for {
		select {
		case u := <-h.urls:
			out = append(out, u)
		default:
			return out
		}
	}
}

func TestRunBrowserHelper(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the openers on PATH are Linux's")
	}
	f := newFixture(t, Options{})
	ctx := context.Background()
	// A real opener further on the PATH, for what the helper passes on.
	bin := filepath.Join(f.own, "bin") // where the sandbox lets the command see it
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\necho \"real xdg-open: $*\"\n"), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))

	// A system python3: the sandbox keeps other homes (a pyenv's shims) out of sight.
	python := ""
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			python = p
			break
		}
	}
	tests := []struct {
		name, command string
		want          []string // addresses heard
		output        string   // in the command's output
	}{
		{"xdg-open", "xdg-open 'https://example.com/login?x=1'", []string{"https://example.com/login?x=1"}, ""},
		{"$BROWSER", `"$BROWSER" https://github.com/login/device`, []string{"https://github.com/login/device"}, ""},
		{"gio open", "gio open https://example.com/a && sensible-browser http://localhost:8400/cb", []string{"https://example.com/a", "http://localhost:8400/cb"}, ""},
		{"not openable", "xdg-open https://192.168.1.1/ ; x-www-browser http://example.com/", nil, ""},
		{"a file goes to the real opener", "xdg-open ./report.pdf", nil, "real xdg-open: ./report.pdf"},
		{"python's webbrowser", python + ` -c 'import webbrowser; webbrowser.open("https://accounts.example.com/o/auth?state=s")'`, []string{"https://accounts.example.com/o/auth?state=s"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.HasPrefix(tt.command, " ") {
				t.Skip("no python3 here")
			}
			h := newHeard()
			r, err := f.c.Run(ctx, h.request(f, tt.command))
			if err != nil {
				t.Fatal(err)
			}
			end := h.end(t)
			// Pages handed over in the same instant may come in either order.
			got := h.urlsHeard()
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("heard %q, want %q (output %q)", got, tt.want, end.Output)
			}
			if tt.output != "" && !strings.Contains(end.Output, tt.output) {
				t.Errorf("output %q lacks %q", end.Output, tt.output)
			}
			// The helper's folder goes with its command.
			if m, _ := filepath.Glob(filepath.Join(f.c.o.Temp[0], "ensemble-browser-*")); len(m) != 0 {
				t.Errorf("the helper's folders are left: %v", m)
			}
			_ = r
		})
	}
}

func TestRunDeviceCode(t *testing.T) {
	f := newFixture(t, Options{})
	h := newHeard()
	// A sign-in that prints its code in pieces, in colour, then waits a moment and succeeds.
	script := `printf '\033[0;33m!\033[0m First copy your one-time '; sleep 0.1; printf 'code: \033[1mABCD-1234\033[0m\n'; ` +
		`echo 'Open this URL to continue in your web browser: https://github.com/login/device'; sleep 0.2; echo done`
	if _, err := f.c.Run(context.Background(), h.request(f, script)); err != nil {
		t.Fatal(err)
	}
	end := h.end(t)
	select {
	case dc := <-h.codes:
		if dc != (DeviceCode{URL: "https://github.com/login/device", Code: "ABCD-1234"}) {
			t.Errorf("heard %+v", dc)
		}
	default:
		t.Fatalf("no code heard; output %q", end.Output)
	}
	if len(h.codes) != 0 || end.ExitCode != 0 {
		t.Errorf("a second code, or exit %d", end.ExitCode)
	}
}

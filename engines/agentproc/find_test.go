package agentproc

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

// program writes an executable stand-in for name in dir.
func program(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFind(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("programs are .exe and .cmd there")
	}
	work := t.TempDir()
	home := t.TempDir()
	elsewhere := t.TempDir()
	inWork := program(t, filepath.Join(work, "bin"), "agent")
	inHome := program(t, filepath.Join(home, ".local", "bin"), "agent")
	program(t, filepath.Join(home, ".local", "bin"), "second")
	appCopy := program(t, filepath.Join(elsewhere, "app"), "agent")
	linkToWork := filepath.Join(elsewhere, "link")
	if err := os.Symlink(inWork, linkToWork); err != nil {
		t.Fatal(err)
	}
	notExecutable := filepath.Join(elsewhere, "plain")
	if err := os.WriteFile(notExecutable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHELL", "/bin/false") // no login shell PATH
	t.Setenv("PATH", filepath.Join(work, "bin")+string(os.PathListSeparator)+"relative/bin")
	for _, c := range []struct {
		name     string
		programs []string
		also     []string
		want     string // "" wants ErrNotInstalled
	}{
		{"on the trusted path, not in the work folder", []string{"agent"}, nil, inHome},
		{"the first program found", []string{"missing", "second", "agent"}, nil, filepath.Join(home, ".local", "bin", "second")},
		{"the path before the app's copy", []string{"agent"}, []string{appCopy}, inHome},
		{"the app's copy", []string{"missing"}, []string{notExecutable, appCopy}, appCopy},
		{"no link into the work folder", []string{"missing"}, []string{linkToWork}, ""},
		{"none", []string{"missing"}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Find(home, work, c.programs, c.also, "install it")
			if c.want == "" {
				if !errors.Is(err, engines.ErrNotInstalled) || !strings.HasSuffix(err.Error(), ": install it") {
					t.Errorf("got %q, %v; want ErrNotInstalled with the hint", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %s", got, err, c.want)
			}
		})
	}
	for _, d := range TrustedPath(home, work) {
		if !filepath.IsAbs(d) || within(d, work) {
			t.Errorf("trusted path holds %s", d)
		}
	}
}

func TestWithin(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p, folder string
		want      bool
	}{
		{dir, dir, true},
		{filepath.Join(dir, "a", "b"), dir, true},
		{filepath.Join(link, "a"), dir, true}, // links followed where they exist
		{filepath.Join(link, "missing"), dir, false},
		{filepath.Join(dir, "a"), link, true},
		{filepath.Dir(dir), dir, false},
		{dir + "x", dir, false},
		{filepath.Join(dir, "..", "..x"), dir, false},
	} {
		if got := within(c.p, c.folder); got != c.want {
			t.Errorf("within(%s, %s) = %v, want %v", c.p, c.folder, got, c.want)
		}
	}
}

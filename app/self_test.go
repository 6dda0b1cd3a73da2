package app

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestCommandFor(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "ensemble")
	other := filepath.Join(dir, "local", "ensemble")
	link := filepath.Join(dir, "link", "ensemble")
	spaced := filepath.Join(dir, "my tools", "ensemble")
	for _, p := range []string{bin, other, spaced} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
	}
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	found := func(p string) func(string) (string, error) {
		return func(string) (string, error) { return p, nil }
	}
	none := func(string) (string, error) { return "", errors.New("not found") }
	for _, tc := range []struct {
		name, exe string
		look      func(string) (string, error)
		want      string
	}{
		{"on the PATH", bin, found(bin), "ensemble"},
		{"on the PATH through a link", bin, found(link), "ensemble"},
		{"not on the PATH", bin, none, bin},
		{"another ensemble on the PATH", bin, found(other), bin},
		{"a path with a space", spaced, none, `"` + spaced + `"`},
	} {
		if got := commandFor(tc.exe, tc.look); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBuildVersion(t *testing.T) {
	info := func(v string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Main: debug.Module{Version: v}}, true }
	}
	for _, tc := range []struct {
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		{info("v1.2.3"), "1.2.3"},
		{info("(devel)"), "dev"},
		{info(""), "dev"},
		{func() (*debug.BuildInfo, bool) { return nil, false }, "dev"},
	} {
		if got := buildVersion(tc.read); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		if code, out := ensemble(t, args...); code != 0 || out != "ensemble "+Version+"\n" || strings.TrimSpace(Version) == "" {
			t.Errorf("%v: %d %q", args, code, out)
		}
	}
}

func TestOwnCommandNamesTheDataFolder(t *testing.T) {
	self := selfCommand()
	for _, tc := range []struct{ flag, dir, want string }{
		{"", "/home/ada/.local/share/ensemble", self},
		{"/tmp/ens", "/tmp/ens", self + " --data /tmp/ens"},
		{"my data", "/home/ada/my data", self + ` --data '/home/ada/my data'`},
		{"x", "/tmp/it's", self + ` --data '/tmp/it'\''s'`},
	} {
		if got := ownCommand(&globals{data: tc.flag}, tc.dir); got != tc.want {
			t.Errorf("--data %q: %q, want %q", tc.flag, got, tc.want)
		}
	}
}

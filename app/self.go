package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// Version is the build's version, set with -ldflags "-X github.com/ensemblework/ensemble/app.Version=…"
// (the Makefile does); without it, the module's version from the build info (`go install …@v1.2.3`),
// else "dev".
var Version = ""

func init() {
	if Version == "" {
		Version = buildVersion(debug.ReadBuildInfo)
	}
}

// buildVersion is the version Go recorded for the main module, or "dev" for a build from a work
// tree (which Go records as "(devel)").
func buildVersion(read func() (*debug.BuildInfo, bool)) string {
	if bi, ok := read(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return "dev"
}

// selfCommand is how a person at this computer runs this very binary: "ensemble" when that name on
// the PATH is it, else its path (`make run` starts bin/ensemble, which is on no PATH), so the
// hints that say "run `ensemble open`" name a command that exists.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "ensemble"
	}
	return commandFor(exe, exec.LookPath)
}

// commandFor is selfCommand for the binary at exe, with lookPath finding "ensemble" on the PATH.
func commandFor(exe string, lookPath func(string) (string, error)) string {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		return p
	}
	exe = real(exe)
	if p, err := lookPath("ensemble"); err == nil && real(p) == exe {
		return "ensemble"
	}
	if strings.ContainsAny(exe, " \t") {
		return `"` + exe + `"`
	}
	return exe
}

// ownCommand is the command that reaches the runtime of the data folder dir, as a person at this
// computer types it: selfCommand, with --data when the folder was given by the flag (the other
// commands would not find it by themselves).
func ownCommand(g *globals, dir string) string {
	c := selfCommand()
	if g.data != "" {
		c += " --data " + shellWord(dir)
	}
	return c
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

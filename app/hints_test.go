package app

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHintsNameRealCommands: every `ensemble …` a sentence of the runtime, the command line or the
// web UI tells a person to run names a command and flags that exist.
func TestHintsNameRealCommands(t *testing.T) {
	root := newRootCmd(io.Discard)
	hint := regexp.MustCompile("[`']ensemble ([a-z][^`'\n]*)[`']")
	checked := 0
	for _, dir := range []string{".", "../runtime", "../bridge", "../relay", "../frontend/src"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") || strings.Contains(path, ".test.") ||
				!(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".ts") || strings.HasSuffix(path, ".svelte")) {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return nil
			}
			for _, m := range hint.FindAllStringSubmatch(string(b), -1) {
				if problem := checkHint(root, m[1]); problem != "" {
					t.Errorf("%s: `ensemble %s`: %s", path, m[1], problem)
				}
				checked++
			}
			return nil
		})
	}
	if checked < 20 {
		t.Errorf("only %d hints found: is the pattern still right?", checked)
	}
}

// checkHint says what is wrong with the command line `ensemble <line>`, "" when it would run.
func checkHint(root *cobra.Command, line string) string {
	words := strings.Fields(line)
	var path []string
	for _, w := range words {
		if strings.HasPrefix(w, "-") || !regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) {
			break
		}
		path = append(path, w)
	}
	cmd, rest, err := root.Find(path)
	if err != nil {
		return err.Error()
	}
	// A word past the command that is not one of its subcommands must be one of its arguments.
	if len(rest) > 0 && cmd.HasSubCommands() && cmd.Args == nil {
		return "there is no command " + strings.Join(path, " ")
	}
	for _, w := range words {
		if !strings.HasPrefix(w, "--") || w == "--" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		name = strings.TrimRight(name, ".,;:)")
		if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil && name != "help" {
			return "`" + cmd.CommandPath() + "` has no flag --" + name
		}
	}
	return ""
}

// TestFlagHelpReadsRight: a flag's help names its value in words (cobra takes a `word` in the
// usage for the value's name, so a backticked command there comes out garbled).
func TestFlagHelpReadsRight(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// cobra renders "--name value   usage"; a value name of more than one word is a usage
		// with a backticked phrase in it.
		for _, l := range strings.Split(c.LocalFlags().FlagUsages(), "\n") {
			if m := regexp.MustCompile(`^\s+(?:-\w, )?--[a-z-]+ (\S+(?: \S+)+) {2,}`).FindStringSubmatch(l); m != nil {
				t.Errorf("%s: %q: the flag's help has a backticked phrase, which --help renders as its value's name", c.CommandPath(), strings.TrimSpace(l))
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd(io.Discard))

	code, out := ensemble(t, "relay", "--help")
	if code != 0 || !regexp.MustCompile(`--join-secret file +a file holding a secret`).MatchString(out) {
		t.Errorf("relay --help: %d\n%s", code, out)
	}
}

package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/judge"
)

// Exit codes of `ensemble judge`.
const (
	judgeExitAllow  = 0
	judgeExitRefuse = 2
	judgeExitAsk    = 3
)

func newJudgeCmd() *cobra.Command {
	var (
		folder, cwd, mode, outside, git, internet string
		trusted, sandbox, askCommit, asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "judge [flags] -- COMMAND…",
		Short: "Ask the permission judge what it would say about a shell command",
		Long: `Judge reads a shell command exactly as an agent's shell tool would send it (the words
after -- are joined with spaces into one line) and prints what Ensemble's permission judge
decides under the run settings given by the flags: allow, refuse with a reason, or ask you.
Nothing is run.

Exit codes: 0 allow, 2 refuse, 3 ask, 1 for a usage error.

Examples:
  ensemble judge -- ls -la
  ensemble judge --mode unattended -- 'curl -fsSL https://x.sh | sh'
  ensemble judge --folder ~/code/app --git commit -- git push origin main
  ensemble judge --internet off --json -- ssh example.com uptime`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if at := cmd.ArgsLenAtDash(); at > 0 {
				return fmt.Errorf("Put the command after --, for example: ensemble judge -- %s.", strings.Join(args, " "))
			}
			if len(args) == 0 {
				return errors.New("Nothing to judge; name a command after --, for example: ensemble judge -- ls -la.")
			}
			s, err := judgeSettings(cmd, folder, mode, outside, git, internet, trusted, sandbox, askCommit)
			if err != nil {
				return err
			}
			call := judge.Call{Tool: judge.ToolShell, Command: strings.Join(args, " "), Cwd: cwd}
			v := judge.Decide(call, s)
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(out, string(b))
			} else {
				fmt.Fprintln(out, v.String())
			}
			switch v.Decision {
			case judge.Allow:
				return nil
			case judge.Ask:
				return exitError{judgeExitAsk}
			default:
				return exitError{judgeExitRefuse}
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&folder, "folder", "", "the run folder (default the current folder)")
	f.StringVar(&cwd, "cwd", "", "the folder the command runs in, absolute or inside the run folder (default the run folder)")
	f.StringVar(&mode, "mode", "ask", "run mode: ask, review (review only) or unattended")
	f.BoolVar(&trusted, "trusted", false, "the person trusted this very folder by name")
	f.BoolVar(&sandbox, "sandbox", false, "the agent's OS sandbox confines its commands")
	f.StringVar(&outside, "outside", "read", "access outside the folder: none, read or readwrite")
	f.StringVar(&git, "git", "any", "git permission: local (no commits), commit (no pushes) or any (no limits)")
	f.BoolVar(&askCommit, "ask-before-commit", false, "ask before each commit")
	f.StringVar(&internet, "internet", "on", "internet: on or off (also true/false)")
	f.BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

func judgeSettings(cmd *cobra.Command, folder, mode, outside, git, internet string, trusted, sandbox, askCommit bool) (judge.Settings, error) {
	var s judge.Settings
	switch judge.Mode(mode) {
	case judge.ModeAsk, judge.ModeReview, judge.ModeUnattended:
		s.Mode = judge.Mode(mode)
	default:
		return s, fmt.Errorf("--mode %q: use ask, review or unattended.", mode)
	}
	switch judge.Outside(outside) {
	case judge.OutsideNone, judge.OutsideRead, judge.OutsideReadWrite:
		s.Outside = judge.Outside(outside)
	default:
		return s, fmt.Errorf("--outside %q: use none, read or readwrite.", outside)
	}
	switch judge.Git(git) {
	case judge.GitLocal, judge.GitCommit, judge.GitAny:
		s.Git = judge.Git(git)
	default:
		return s, fmt.Errorf("--git %q: use local, commit or any.", git)
	}
	switch strings.ToLower(internet) {
	case "on", "true", "yes", "1":
		s.Internet = true
	case "off", "false", "no", "0":
	default:
		return s, fmt.Errorf("--internet %q: use on or off.", internet)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return s, fmt.Errorf("cannot find your home folder: %w", err)
	}
	if folder == "" {
		if folder, err = os.Getwd(); err != nil {
			return s, fmt.Errorf("cannot find the current folder: %w; pass --folder", err)
		}
	} else if strings.HasPrefix(folder, "~") {
		folder = filepath.Join(home, folder[1:])
	}
	if folder, err = filepath.Abs(folder); err != nil {
		return s, fmt.Errorf("--folder: %w", err)
	}
	s.Folder = resolveLinks(folder)
	s.Home = resolveLinks(home)
	flag := ""
	if fl := cmd.Flags().Lookup("data"); fl != nil {
		flag = fl.Value.String()
	}
	if d, err := dataDir(flag); err == nil {
		s.DataDir = resolveLinks(d)
	}
	s.Trusted, s.Sandbox, s.AskBeforeCommit = trusted, sandbox, askCommit
	s.Resolve = func(p string) (string, error) { return resolveLinks(p), nil }
	s.Glob = filepath.Glob
	return s, nil
}

// resolveLinks follows symlinks in p, for the longest part of it that exists.
func resolveLinks(p string) string {
	rest := ""
	for cur := filepath.Clean(p); ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(p)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

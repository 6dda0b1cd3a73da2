package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/jobs"
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
	def := jobs.DefaultSettings()
	cmd := &cobra.Command{
		Use:   "judge [flags] -- COMMAND…",
		Short: "Ask the permission judge what it would say about a shell command",
		Long: `Judge reads a shell command exactly as an agent's shell tool would send it (the words
after -- are joined with spaces into one line) and prints what Ensemble's permission judge
decides under the run settings given by the flags: allow, refuse with a reason, or ask you.
Nothing is run. Flags left out take a run's own defaults (Ask mode, the sandbox on, reading
outside the folder, local git only, the internet on), and the judge knows this computer as a
run does: its skill folders, the folder's git config, the running runtime's address.

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
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	f := cmd.Flags()
	f.StringVar(&folder, "folder", "", "the run folder (default the current folder)")
	f.StringVar(&cwd, "cwd", "", "the folder the command runs in, absolute or inside the run folder (default the run folder)")
	f.StringVar(&mode, "mode", string(def.Mode), "run mode: ask, review (review only) or unattended")
	f.BoolVar(&trusted, "trusted", def.Trusted, "the person trusted this very folder by name")
	f.BoolVar(&sandbox, "sandbox", def.Sandbox, "the agent's OS sandbox confines its commands (--sandbox=false for off)")
	f.StringVar(&outside, "outside", string(def.Outside), "access outside the folder: none, read or readwrite")
	f.StringVar(&git, "git", string(def.Git), "git permission: local (no commits), commit (no pushes) or any (no limits)")
	f.BoolVar(&askCommit, "ask-before-commit", def.AskBeforeCommit, "ask before each commit")
	f.StringVar(&internet, "internet", onOff(def.Internet), "internet: on or off (also true/false)")
	f.BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

// judgeSettings are the judge's settings for the flags, made by the same function a run's are
// (jobs.JudgeSettings over jobs.NewPlaces), so what `ensemble judge` prints is what a run gets.
func judgeSettings(cmd *cobra.Command, folder, mode, outside, git, internet string, trusted, sandbox, askCommit bool) (judge.Settings, error) {
	var in jobs.SettingsInput
	in.Mode, in.Outside, in.Git = &mode, &outside, &git
	in.Trusted, in.Sandbox, in.AskBeforeCommit = &trusted, &sandbox, &askCommit
	switch strings.ToLower(internet) {
	case "on", "true", "yes", "1":
		on := true
		in.Internet = &on
	case "off", "false", "no", "0":
		off := false
		in.Internet = &off
	default:
		return judge.Settings{}, fmt.Errorf("--internet %q: use on or off.", internet)
	}
	rs, err := in.Resolve()
	if err != nil {
		// The run settings' sentence, with the flag it came from.
		switch {
		case strings.HasPrefix(err.Error(), "Mode "):
			return judge.Settings{}, fmt.Errorf("--mode %q: use ask, review or unattended.", mode)
		case strings.HasPrefix(err.Error(), "Outside "):
			return judge.Settings{}, fmt.Errorf("--outside %q: use none, read or readwrite.", outside)
		case strings.HasPrefix(err.Error(), "Git "):
			return judge.Settings{}, fmt.Errorf("--git %q: use local, commit or any.", git)
		}
		return judge.Settings{}, err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return judge.Settings{}, fmt.Errorf("cannot find your home folder: %w", err)
	}
	if folder == "" {
		if folder, err = os.Getwd(); err != nil {
			return judge.Settings{}, fmt.Errorf("cannot find the current folder: %w; pass --folder", err)
		}
	} else if strings.HasPrefix(folder, "~") {
		folder = filepath.Join(home, folder[1:])
	}
	if folder, err = filepath.Abs(folder); err != nil {
		return judge.Settings{}, fmt.Errorf("--folder: %w", err)
	}
	flag := ""
	if fl := cmd.Flags().Lookup("data"); fl != nil {
		flag = fl.Value.String()
	}
	data, _ := dataDir(flag)
	runtimeURL := ""
	if data != "" {
		if f, err := readAPIFile(data); err == nil {
			runtimeURL = f.URL
		}
	}
	return jobs.JudgeSettings(rs, jobs.FolderNamed, folder, jobs.NewPlaces(home, data, runtimeURL), judge.Kept{}), nil
}

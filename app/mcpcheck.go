package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// checkTimeout bounds a client's list command: Claude Code, Gemini CLI and OpenCode start each
// server to say whether it connects.
const checkTimeout = 90 * time.Second

// setupState is what a client's own list command says of the ensemble server.
type setupState int

const (
	stateMissing   setupState = iota // not listed
	stateConnected                   // started and answered
	stateEnabled                     // configured and on, not started by the list (Codex)
	statePending                     // waits for the person's approval (Claude Code)
	stateDisabled                    // off, e.g. in a folder Gemini CLI does not trust
	stateFailed                      // could not start or connect
)

// checkSetup asks client's own list command whether it has the ensemble server in the working
// folder and says so in a sentence; anything short of working ends with exit code 1.
func checkSetup(cmd *cobra.Command, client string, c setupClient, path string) error {
	out := cmd.OutOrStdout()
	say := func(ok bool, format string, a ...any) error {
		fmt.Fprintf(out, format+"\n", a...)
		if !ok {
			return exitError{1}
		}
		return nil
	}
	keyNote := ""
	if os.Getenv("ENSEMBLE_KEY") == "" {
		keyNote = " ENSEMBLE_KEY is not set in this shell, so a client started from it gives the bridge no key (make one with `ensemble keys create NAME`)."
	}
	if c.list == nil {
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), `"`+setupName+`"`) {
			return say(false, "%s has no %s entry: run `ensemble mcp setup %s`. %s has no command that lists its servers, so --check reads only the file.", path, setupName, client, c.name)
		}
		return say(keyNote == "", "%s has the %s entry; %s has no command that lists its servers, so whether it starts it shows only in %s.%s", path, setupName, c.name, c.name, keyNote)
	}
	prog, err := exec.LookPath(c.list[0])
	if err != nil {
		return say(false, "%s is not installed here: there is no `%s` on the PATH.", c.name, c.list[0])
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), checkTimeout)
	defer cancel()
	run := exec.CommandContext(ctx, prog, c.list[1:]...)
	var stdout, stderr strings.Builder
	run.Stdout, run.Stderr = &stdout, &stderr
	runErr := run.Run()
	listCmd := strings.Join(c.list, " ")
	if ctx.Err() != nil {
		return say(false, "`%s` did not answer within %v.", listCmd, checkTimeout)
	}
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return fmt.Errorf("run %s: %w", listCmd, runErr)
		}
		return say(false, "`%s` failed (%v): %s", listCmd, runErr, lastLine(stripANSI(stderr.String()+stdout.String())))
	}
	var state setupState
	var detail string
	if client == "codex" {
		state, detail = codexListState(stdout.String())
	} else {
		state, detail = listState(stripANSI(stdout.String() + "\n" + stderr.String()))
	}
	where := "in this folder"
	if client == "codex" {
		where = "in " + path
	}
	switch state {
	case stateConnected:
		return say(true, "%s starts the %s server %s and it answers (`%s`: %s).%s", c.name, setupName, where, listCmd, detail, keyNote)
	case stateEnabled:
		return say(true, "%s has the %s server, on, %s; it starts it in each session (`%s` does not start servers, so one that fails shows only there).%s", c.name, setupName, where, listCmd, keyNote)
	case statePending:
		return say(false, "%s has the %s server but waits for your approval: run `claude` in this folder and approve %s.", c.name, setupName, setupName)
	case stateDisabled:
		if client == "gemini" {
			return say(false, "%s has the %s server but keeps it off because this folder is not trusted: run `gemini` here and trust the folder when it asks.", c.name, setupName)
		}
		return say(false, "%s has the %s server but it is off (%s): turn it on in %s.", c.name, setupName, detail, path)
	case stateFailed:
		return say(false, "%s has the %s server but cannot start it (`%s`: %s): is ENSEMBLE_KEY set where %s starts, and the runtime running (`ensemble open`)?%s", c.name, setupName, listCmd, detail, c.name, keyNote)
	}
	return say(false, "%s does not list a %s server %s: run `ensemble mcp setup %s`%s.", c.name, setupName, where, client, map[bool]string{true: " here", false: ""}[client != "codex"])
}

var (
	ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	// listLine is the ensemble server's line in a client's list: "ensemble: cmd - ✓ Connected"
	// (Claude Code, Gemini CLI), "●  ✓ ensemble connected" (OpenCode).
	listLine = regexp.MustCompile(`(?:^|[\s│●○✓✗⏸])` + setupName + `(?::|\s|$)`)
)

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// listState reads the ensemble server's state from Claude Code's, Gemini CLI's or OpenCode's list,
// and the words that say it.
func listState(out string) (setupState, string) {
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if !listLine.MatchString(line) || strings.Contains(line, "[Warning]") || strings.Contains(line, "Location:") {
			continue
		}
		next := ""
		if i+1 < len(lines) {
			next = strings.Trim(strings.TrimSpace(lines[i+1]), "│ ")
		}
		l := strings.ToLower(line)
		switch {
		case strings.Contains(l, "pending approval"):
			return statePending, "Pending approval"
		case strings.Contains(l, "disabled"):
			return stateDisabled, "Disabled"
		case strings.Contains(l, "disconnected"), strings.Contains(l, "failed"), strings.Contains(line, "✗"):
			if next != "" && strings.Contains(l, "failed") && !strings.Contains(line, " - ") {
				return stateFailed, "failed: " + next // OpenCode gives the reason on the next line
			}
			if i := strings.LastIndex(line, " - "); i >= 0 {
				return stateFailed, strings.TrimSpace(line[i+3:])
			}
			return stateFailed, strings.TrimSpace(line)
		case strings.Contains(l, "connected"):
			return stateConnected, "Connected"
		}
		return stateEnabled, strings.TrimSpace(line)
	}
	return stateMissing, ""
}

// codexListState reads `codex mcp list --json`, which lists the configured servers without
// starting them.
func codexListState(out string) (setupState, string) {
	var servers []struct {
		Name           string `json:"name"`
		Enabled        bool   `json:"enabled"`
		DisabledReason any    `json:"disabled_reason"`
		Transport      struct {
			Command string `json:"command"`
		} `json:"transport"`
	}
	if err := json.Unmarshal([]byte(out), &servers); err != nil {
		return stateMissing, ""
	}
	for _, s := range servers {
		if s.Name != setupName {
			continue
		}
		if !s.Enabled {
			return stateDisabled, fmt.Sprint(s.DisabledReason)
		}
		// Codex starts it only in a session; a command that is not there would fail there.
		if c := s.Transport.Command; filepath.IsAbs(c) {
			if fi, err := os.Stat(c); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				return stateFailed, c + " is not there (run `ensemble mcp setup codex` again)"
			}
		}
		return stateEnabled, "enabled"
	}
	return stateMissing, ""
}

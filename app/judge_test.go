package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func runJudge(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := newJudgeCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	code := 0
	var ee exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		code = 1
		out.WriteString(err.Error())
	}
	return out.String(), code
}

func TestJudgeCmd(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"quiet read", []string{"--folder", dir, "--", "ls", "-la"}, 0, "allow"},
		{"sudo refused", []string{"--folder", dir, "--", "sudo", "ls"}, 2, "refuse: `sudo` runs commands as the administrator"},
		{"floor in unattended", []string{"--folder", dir, "--mode", "unattended", "--", "rm -rf /"}, 2, "refuse:"},
		{"ask mode", []string{"--folder", dir, "--", "npm", "install"}, 3, "ask: In Ask mode"},
		{"review mode", []string{"--folder", dir, "--mode", "review", "--", "npm", "install"}, 0, "allow"},
		{"internet off", []string{"--folder", dir, "--internet", "off", "--", "ssh", "example.com"}, 2, "internet off"},
		{"internet=false", []string{"--folder", dir, "--internet=false", "--", "curl", "https://example.com"}, 2, "internet off"},
		{"git commit permission", []string{"--folder", dir, "--mode", "review", "--git", "commit", "--", "git", "push"}, 2, "stops at Commit"},
		{"no command", []string{"--folder", dir}, 1, "name a command"},
		{"bad mode", []string{"--folder", dir, "--mode", "wild", "--", "ls"}, 1, "--mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := runJudge(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("got exit %d, want %d (output %q)", code, tt.wantCode, out)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("got output %q, want it to contain %q", out, tt.wantOut)
			}
		})
	}
}

func TestJudgeCmdJSON(t *testing.T) {
	out, code := runJudge(t, "--folder", t.TempDir(), "--json", "--", "sudo", "-i")
	if code != 2 {
		t.Fatalf("got exit %d, want 2", code)
	}
	var v struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Message  string `json:"message"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("got %q: %v", out, err)
	}
	if v.Decision != "refuse" || v.Reason == "" || !strings.HasPrefix(v.Message, "Refused: ") {
		t.Errorf("got %+v", v)
	}
}

// TestJudgeCmdRunDefaults: flags left out take a run's own defaults (local git, the sandbox on),
// and the judge knows the folder's git config as a run does: what it prints is what a run gets.
func TestJudgeCmdRunDefaults(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	for _, tt := range []struct {
		args     []string
		wantCode int
		wantOut  string
	}{
		{[]string{"--folder", dir, "--", "git", "status"}, 0, "allow"},
		{[]string{"--folder", dir, "--mode", "unattended", "--", "git", "log"}, 0, "allow"},
		{[]string{"--folder", dir, "--mode", "unattended", "--", "git", "commit", "-m", "x"}, 2, "Local only"},
		{[]string{"--folder", dir, "--sandbox=false", "--", "git", "status"}, 3, "ask:"},
		{[]string{"--folder", dir, "--mode", "unattended", "--", "ensemble", "needs", "answer", "x"}, 2, "Ensemble"},
	} {
		out, code := runJudge(t, tt.args...)
		if code != tt.wantCode || !strings.Contains(out, tt.wantOut) {
			t.Errorf("%v: got exit %d, %q; want %d, %q", tt.args, code, out, tt.wantCode, tt.wantOut)
		}
	}
	if out, err := exec.Command("git", "-C", dir, "config", "core.pager", "less").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v: %s", err, out)
	}
	if out, code := runJudge(t, "--folder", dir, "--", "git", "status"); code != 3 {
		t.Errorf("git status with a pager set: got exit %d, %q; want 3 (ask)", code, out)
	}
}

package app

import (
	"bytes"
	"encoding/json"
	"errors"
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

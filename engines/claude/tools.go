package claude

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/ensemblework/ensemble/engines"
)

// toolCall reads a Claude Code tool call for the judge: its kind, and the
// command, paths or URL it touches. Relative paths are taken from folder,
// where Claude Code runs.
func toolCall(id, tool string, input json.RawMessage, folder string) engines.ToolCall {
	call := engines.ToolCall{ID: id, Tool: tool, Input: input}
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
		URL          string `json:"url"`
		// Unsandboxed: the model asks to run the command outside Claude Code's sandbox.
		Unsandboxed bool `json:"dangerouslyDisableSandbox"`
	}
	_ = json.Unmarshal(input, &in)
	path := func(p string) string {
		if p == "" {
			return folder
		}
		if strings.HasPrefix(p, "~") || filepath.IsAbs(p) || folder == "" {
			return p
		}
		return filepath.Join(folder, p)
	}
	switch {
	case tool == "Bash":
		call.Kind, call.Command, call.Cwd, call.Unsandboxed = "shell", in.Command, folder, in.Unsandboxed
	case tool == "Edit" || tool == "Write" || tool == "MultiEdit":
		call.Kind, call.Paths = "edit", []string{path(in.FilePath)}
	case tool == "NotebookEdit":
		call.Kind, call.Paths = "edit", []string{path(in.NotebookPath)}
	case tool == "Read":
		call.Kind, call.Paths = "read", []string{path(in.FilePath)}
	case tool == "NotebookRead":
		call.Kind, call.Paths = "read", []string{path(in.NotebookPath)}
	case tool == "Glob" || tool == "Grep" || tool == "LS":
		call.Kind, call.Paths = "read", []string{path(in.Path)}
	case tool == "WebFetch":
		call.Kind, call.URL = "fetch", in.URL
	case tool == "WebSearch":
		call.Kind = "web_search"
	case strings.HasPrefix(tool, "mcp__"):
		call.Kind = "mcp"
	}
	return call
}

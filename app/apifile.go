package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// apiFile is api.json in the data folder: how the command-line clients, the desktop window and the
// context bridge find a running runtime. It holds the launch token, so it is readable only by its
// owner (0600), and removed when the runtime stops cleanly.
type apiFile struct {
	URL     string `json:"url"`
	Port    int    `json:"port"`
	PID     int    `json:"pid"`
	Token   string `json:"token"`
	Version string `json:"version"`
}

func apiFilePath(dir string) string { return filepath.Join(dir, "api.json") }

// writeAPIFile writes api.json whole or not at all: a client never reads half a file.
func writeAPIFile(dir string, f apiFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".api-*.json")
	if err != nil {
		return fmt.Errorf("write api.json: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write api.json: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write api.json: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write api.json: %w", err)
	}
	if err := os.Rename(tmp.Name(), apiFilePath(dir)); err != nil {
		return fmt.Errorf("write api.json: %w", err)
	}
	return nil
}

// errNotRunning says no runtime has written api.json in the data folder.
var errNotRunning = errors.New("not running")

func readAPIFile(dir string) (apiFile, error) {
	var f apiFile
	b, err := os.ReadFile(apiFilePath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return f, errNotRunning
	}
	if err != nil {
		return f, fmt.Errorf("read %s: %w", apiFilePath(dir), err)
	}
	if err := json.Unmarshal(b, &f); err != nil || f.URL == "" || f.Token == "" {
		return f, fmt.Errorf("%s is damaged; stop Ensemble, delete the file and start it again", apiFilePath(dir))
	}
	return f, nil
}

// removeAPIFile removes api.json if it is still ours (a newer runtime may have replaced it).
func removeAPIFile(dir string, pid int) {
	if f, err := readAPIFile(dir); err == nil && f.PID == pid {
		os.Remove(apiFilePath(dir))
	}
}

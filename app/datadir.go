package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// dataDir returns the data folder: the flag, else $ENSEMBLE_DATA, else the OS's place for
// application data (XDG data home on Linux, Application Support on macOS, %APPDATA% on Windows).
func dataDir(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if env := os.Getenv("ENSEMBLE_DATA"); env != "" {
		return filepath.Abs(env)
	}
	return defaultDataDir(runtime.GOOS, os.Getenv, os.UserHomeDir)
}

func defaultDataDir(goos string, getenv func(string) string, home func() (string, error)) (string, error) {
	switch goos {
	case "windows":
		if d := getenv("APPDATA"); d != "" {
			return filepath.Join(d, "Ensemble"), nil
		}
		return "", errors.New("cannot find the data folder: %APPDATA% is not set; pass --data")
	case "darwin", "ios":
		h, err := home()
		if err != nil {
			return "", fmt.Errorf("cannot find the data folder: %w; pass --data", err)
		}
		return filepath.Join(h, "Library", "Application Support", "Ensemble"), nil
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ensemble"), nil
	}
	h, err := home()
	if err != nil {
		return "", fmt.Errorf("cannot find the data folder: %w; pass --data", err)
	}
	return filepath.Join(h, ".local", "share", "ensemble"), nil
}

// dbPath is the database file in a data folder.
func dbPath(dir string) string { return filepath.Join(dir, "ensemble.db") }

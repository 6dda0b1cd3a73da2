package enginetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// EnvCache overrides where [InstallNPM] keeps installed packages.
const EnvCache = "ENSEMBLE_TEST_CACHE"

// InstallNPM returns the path of bin from the npm package pkg at version,
// installed with `npm install --prefix` into a cache folder kept across test
// runs ($ENSEMBLE_TEST_CACHE, else the user cache folder, e.g.
// ~/.cache/ensemble-test/npm/<pkg>@<version>) and reused when present.
// Pin version: the agents' protocols change between releases.
//
// Installing needs the npm registry; without npm the test is skipped, or
// fails under CI=true (see [CannotRun]).
func InstallNPM(t testing.TB, pkg, version, bin string) string {
	t.Helper()
	root := os.Getenv(EnvCache)
	if root == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			CannotRun(t, "no cache folder for installed CLIs: "+err.Error())
		}
		root = filepath.Join(dir, "ensemble-test")
	}
	name := strings.ReplaceAll(strings.TrimPrefix(pkg, "@"), "/", "+") + "@" + version
	dir := filepath.Join(root, "npm", name)
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		CannotRun(t, "npm is not installed; it installs "+pkg+"@"+version+" for this test")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// Install beside the final folder and rename, so a half-done install is
	// never taken for a finished one, and two test binaries do not clash.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), name+".partial-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error", pkg+"@"+version)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("enginetest: npm install %s@%s: %v\n%s", pkg, version, err, out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "node_modules", ".bin", bin)); err != nil {
		t.Fatalf("enginetest: npm install %s@%s gave no %s: %v\n%s", pkg, version, bin, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(path); serr != nil {
			t.Fatalf("enginetest: keep install of %s@%s: %v", pkg, version, err)
		}
		// Another test binary finished first; use its copy.
	}
	t.Logf("enginetest: installed %s@%s in %s (%v)", pkg, version, dir, time.Since(start).Round(time.Millisecond))
	return path
}

func timeUntil(d time.Time) time.Duration { return time.Until(d).Round(time.Second) }

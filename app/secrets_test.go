package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ensembleIn runs the command line in-process with stdin.
func ensembleIn(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := newRootCmd(&out)
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		out.WriteString("ensemble: " + err.Error() + "\n")
		return 1, out.String()
	}
	return 0, out.String()
}

func TestSecretsCommands(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	const value = "rk_live_51the-secret-value"

	code, out := ensembleIn(t, value+"\n", data, "secrets", "set", "STRIPE_API_KEY", "--allow", "https://api.stripe.com")
	if code != 0 || !strings.Contains(out, "Kept STRIPE_API_KEY, encrypted on this computer; it may be sent only to https://api.stripe.com.") {
		t.Fatalf("set: %d %q", code, out)
	}
	if code, out = ensembleIn(t, "sk-ant-key-from-stdin\n", data, "secrets", "set-key", "anthropic"); code != 0 || !strings.Contains(out, "Kept the anthropic key") {
		t.Fatalf("set-key: %d %q", code, out)
	}
	code, out = ensembleIn(t, "", data, "secrets", "list")
	if code != 0 || !regexp.MustCompile(`STRIPE_API_KEY\s+run\s+https://api.stripe.com`).MatchString(out) ||
		!strings.Contains(out, "provider:anthropic") || strings.Contains(out, value) || strings.Contains(out, "sk-ant-key") {
		t.Fatalf("list: %d %q", code, out)
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"reserved", value, []string{"secrets", "set", "GITHUB_TOKEN"}, "GITHUB_TOKEN is reserved"},
		{"no value", "", []string{"secrets", "set", "OTHER"}, "No value came in on standard input"},
		{"bad origin", value, []string{"secrets", "set", "OTHER", "--allow", "http://example.com"}, "must be https"},
		{"set-key ollama", "x", []string{"secrets", "set-key", "ollama"}, "Ollama needs no key"},
		{"remove unknown", "", []string{"secrets", "remove", "NOPE"}, "There is no secret named NOPE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := ensembleIn(t, tc.stdin, append([]string{data}, tc.args...)...)
			if code != 1 || !strings.Contains(out, tc.want) {
				t.Fatalf("got %d %q, want %q", code, out, tc.want)
			}
		})
	}
	code, out = ensembleIn(t, "", data, "secrets", "fingerprint")
	fp := regexp.MustCompile(`^[0-9A-F]{4} [0-9A-F]{4} [0-9A-F]{4} [0-9A-F]{4}\n`).FindString(out)
	if code != 0 || fp == "" {
		t.Fatalf("fingerprint: %d %q", code, out)
	}
	if code, out = ensembleIn(t, "", data, "secrets", "remove", "STRIPE_API_KEY"); code != 0 || !strings.Contains(out, "Removed STRIPE_API_KEY") {
		t.Fatalf("remove: %d %q", code, out)
	}
	// The value never reached the data folder in the clear.
	entries, _ := os.ReadDir(rt.cfg.DataDir)
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(rt.cfg.DataDir, e.Name())); err == nil && bytes.Contains(b, []byte("51the-secret")) {
			t.Errorf("%s holds the value", e.Name())
		}
	}
	// The fingerprint reads from seal-key.json where no runtime runs.
	dir := t.TempDir()
	if code, out = ensembleIn(t, "", "--data="+dir, "secrets", "fingerprint"); code != 1 || !strings.Contains(out, "no seal key yet") {
		t.Fatalf("fingerprint without a key: %d %q", code, out)
	}
	raw, err := os.ReadFile(filepath.Join(rt.cfg.DataDir, "seal-key.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "seal-key.json"), raw, 0o600)
	if code, out = ensembleIn(t, "", "--data="+dir, "secrets", "fingerprint"); code != 0 || !strings.HasPrefix(out, fp) {
		t.Fatalf("fingerprint offline: %d %q, want %q", code, out, fp)
	}
	if code, out = ensembleIn(t, "", "secrets", "--help"); code != 0 || !strings.Contains(out, "never from the command line") {
		t.Fatalf("help: %d %q", code, out)
	}
}

// Secrets exported for another data folder's recipient import there, through its runtime, with
// their allowed origins; the export opens nowhere else and holds no value in the clear.
func TestSecretsExportImport(t *testing.T) {
	from, to := startTestRuntime(t), startTestRuntime(t)
	const value = "rk_live_moved-secret-value"
	if code, out := ensembleIn(t, value+"\n", "--data="+from.cfg.DataDir, "secrets", "set", "STRIPE_API_KEY", "--allow", "https://api.stripe.com"); code != 0 {
		t.Fatalf("set: %q", out)
	}
	code, out := ensembleIn(t, "", "--data="+to.cfg.DataDir, "secrets", "recipient")
	recipient := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(recipient, "age1") {
		t.Fatalf("recipient: %d %q", code, out)
	}
	if _, again := ensembleIn(t, "", "--data="+to.cfg.DataDir, "secrets", "recipient"); strings.TrimSpace(again) != recipient {
		t.Fatalf("the recipient changed: %q then %q", recipient, again)
	}
	file := filepath.Join(t.TempDir(), "moved.age")
	if code, out := ensembleIn(t, "", "--data="+from.cfg.DataDir, "secrets", "export", file, "--to", recipient); code != 0 || !strings.Contains(out, "Exported 1 secret") {
		t.Fatalf("export: %d %q", code, out)
	}
	if b, _ := os.ReadFile(file); bytes.Contains(b, []byte(value)) || bytes.Contains(b, []byte("STRIPE_API_KEY")) {
		t.Fatal("the export holds a name or value in the clear")
	}
	if code, out := ensembleIn(t, "", "--data="+from.cfg.DataDir, "secrets", "import", file); code != 1 || !strings.Contains(out, "does not open here") {
		t.Fatalf("import where it was not exported to: %d %q", code, out)
	}
	if code, out := ensembleIn(t, "", "--data="+to.cfg.DataDir, "secrets", "import", file); code != 0 || !strings.Contains(out, "Imported 1 secret: STRIPE_API_KEY") {
		t.Fatalf("import: %d %q", code, out)
	}
	v, err := to.secrets.Get(context.Background(), "STRIPE_API_KEY")
	if err != nil || v != value {
		t.Fatalf("the imported secret reads %q, %v", v, err)
	}
	if got := to.secrets.Redactor().Hide("echo " + value); strings.Contains(got, value) {
		t.Fatalf("the receiving runtime does not hide the imported value: %q", got)
	}
}

package app

import (
	"regexp"
	"strings"
	"testing"
)

func TestKeysCommands(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	code, out := ensemble(t, data, "keys", "create", "laptop editor", "--changes")
	m := regexp.MustCompile(`Made key “laptop editor” \((key_[0-9a-f]+)\): reads and makes changes\.\n\n  (ens_[A-Za-z0-9_-]+)\n`).FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "export ENSEMBLE_KEY=") {
		t.Fatalf("keys create: %d %q", code, out)
	}
	id, secret := m[1], m[2]
	code, out = ensemble(t, data, "keys", "list")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "…"+secret[len(secret)-4:]) || strings.Contains(out, secret) || !strings.Contains(out, "active") {
		t.Errorf("keys list: %d %q", code, out)
	}
	code, out = ensemble(t, data, "keys", "whoami", "--key", secret)
	if code != 0 || out != "Key “laptop editor” ("+id+") reads and makes changes in “Personal”.\n" {
		t.Errorf("whoami: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "keys", "revoke", id); code != 0 || !strings.Contains(out, "Revoked key “laptop editor”") {
		t.Errorf("revoke: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "keys", "whoami", "--key", secret); code != 1 || !strings.Contains(out, "revoked") {
		t.Errorf("whoami after revoke: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "keys", "create", "reader"); code != 0 || !strings.Contains(out, "): reads.") {
		t.Errorf("read-only key: %d %q", code, out)
	}
}

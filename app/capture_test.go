package app

import (
	"strings"
	"testing"
)

// TestCaptureSitesCommand keeps the two site lists from the command line: a site takes one rule,
// remove takes it out of both, and a bad site or a wrong use is one sentence that changes nothing.
func TestCaptureSitesCommand(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	want := func(out string, lines ...string) {
		t.Helper()
		if got := strings.Join(strings.Fields(out), " "); got != strings.Join(strings.Fields(strings.Join(lines, " ")), " ") {
			t.Fatalf("output:\n%s\nwant:\n%s", out, strings.Join(lines, "\n"))
		}
	}
	preview := "Captures you see first (held on a card, shown to no model):"
	never := "Never captured (no screenshot, no live picture of a run's tab):"
	code, out := ensemble(t, data, "capture", "sites")
	if code != 0 {
		t.Fatalf("list: %d %q", code, out)
	}
	want(out, preview, "(none)", never, "(none)")
	if code, out = ensemble(t, data, "capture", "sites", "preview", "Bank.Example.com", "https://mail.example.org/inbox"); code != 0 {
		t.Fatalf("preview: %d %q", code, out)
	}
	want(out, preview, "bank.example.com", "mail.example.org", never, "(none)")
	if code, out = ensemble(t, data, "capture", "sites", "never", "mail.example.org", "health.example"); code != 0 {
		t.Fatalf("never: %d %q", code, out)
	}
	want(out, preview, "bank.example.com", never, "health.example", "mail.example.org")
	if rule := rt.nodes.SiteRule(t.Context(), "login.bank.example.com"); rule != "preview" {
		t.Fatalf("the runtime's rule for a subdomain: %q", rule)
	}
	if code, out = ensemble(t, data, "capture", "sites", "remove", "MAIL.example.org"); code != 0 {
		t.Fatalf("remove: %d %q", code, out)
	}
	want(out, preview, "bank.example.com", never, "health.example")
	for _, bad := range [][]string{{"capture", "sites", "sometimes", "a.com"}, {"capture", "sites", "never"}, {"capture", "sites", "never", "a b/c"}} {
		if code, out := ensemble(t, append([]string{data}, bad...)...); code == 0 || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("%v: %d %q, want one sentence", bad, code, out)
		}
	}
	if _, out = ensemble(t, data, "capture", "sites"); !strings.Contains(out, "health.example") || strings.Contains(out, "a b/c") {
		t.Fatalf("a refused change changed the lists: %q", out)
	}
	if code, out := ensemble(t, "capture", "sites", "--help"); code != 0 || !strings.Contains(out, "covers its") {
		t.Fatalf("help: %d %q", code, out)
	}
}

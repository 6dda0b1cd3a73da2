package api

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Evidence and shared files go out as their own type only where that is harmless, never sniffed,
// sandboxed, and never cached.
func TestServeEvidenceHeaders(t *testing.T) {
	s := &Server{}
	for _, tc := range []struct{ name, typ, disposition string }{
		{"shot.png", "image/png", ""},
		{"notes.md", "text/plain; charset=utf-8", ""},
		{"page.html", "application/octet-stream", "attachment"},
		{"tool.svg", "application/octet-stream", "attachment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), tc.name)
			if err := os.WriteFile(p, []byte("<script>alert(1)</script>"), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			s.serveEvidence(rec, httptest.NewRequest("GET", "/x", nil), tc.name, f)
			h := rec.Result().Header
			if h.Get("Content-Type") != tc.typ || !strings.HasPrefix(h.Get("Content-Disposition"), tc.disposition) ||
				h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "private, no-store" ||
				!strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
				t.Fatalf("headers %v", h)
			}
		})
	}
}

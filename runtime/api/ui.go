package api

import (
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// csp keeps the UI to its own files: no inline scripts, no other origins, no framing. Images may
// be blob: URLs, which only the page's own script makes (a live browser view's pictures).
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ui serves the built web UI. Paths that are not files get index.html, so the UI's own routes load
// on refresh. Without a built UI it serves a page saying how to build it.
func (s *Server) ui() http.Handler {
	built := s.opts.UI != nil
	if built {
		if _, err := fs.Stat(s.opts.UI, "index.html"); err != nil {
			built = false
		}
	}
	files := http.FileServerFS(s.opts.UI)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, http.StatusMethodNotAllowed, "The web UI only answers GET.")
			return
		}
		if !built {
			h.Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, page("Ensemble is running",
				"The web UI is not built into this binary. Run <code>make run</code> (or <code>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build</code>, then rebuild) to get it. The API is up at <code>/api</code>."))
			return
		}
		p := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if st, err := fs.Stat(s.opts.UI, p); p == "" || err != nil || st.IsDir() {
			h.Set("Cache-Control", "no-cache")
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/"
			files.ServeHTTP(w, r2)
			return
		}
		if strings.HasPrefix(p, "assets/") {
			h.Set("Cache-Control", "public, max-age=31536000, immutable") // Vite names them by content hash
		}
		files.ServeHTTP(w, r)
	})
}

// page is a minimal HTML page for messages served outside the UI.
func page(title, body string) string {
	return fmt.Sprintf(`<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">`+
		`<title>%s</title><body style="font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem">`+
		`<h1 style="font-size:1.4rem">%s</h1><p>%s</p></body></html>`, html.EscapeString(title), html.EscapeString(title), body)
}

// Package frontend holds the web UI, built by Vite into frontend/dist and embedded in the binary.
// On a clone where the UI has not been built, dist holds only .keep and the runtime serves a page
// saying how to build it.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist is the built UI, rooted at its index.html.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal directory of this package
	}
	return sub
}

// Built reports whether the UI was built into the binary.
func Built() bool {
	_, err := fs.Stat(Dist(), "index.html")
	return err == nil
}

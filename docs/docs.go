// Package docs holds Ensemble's own documentation, embedded so that the context bridge's
// ensemble_docs can search it without the source tree.
package docs

import "embed"

// Files are the documentation pages, Markdown.
//
//go:embed *.md
var Files embed.FS

// Command ensemble is the Ensemble runtime and its command line: see app.Main.
package main

import (
	"context"
	"os"

	"github.com/ensemblework/ensemble/app"
)

func main() {
	os.Exit(app.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

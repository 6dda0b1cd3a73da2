package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// OtherHomes are the other accounts' home folders on this computer, which no command reads.
func OtherHomes(home string) []string {
	var out []string
	for _, root := range []string{"/home", "/Users"} {
		es, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range es {
			p := filepath.Join(root, e.Name())
			if e.IsDir() && e.Name() != "Shared" && p != home && !strings.HasPrefix(home, p+"/") {
				out = append(out, p)
			}
		}
	}
	if home != "/root" {
		out = append(out, "/root")
	}
	return out
}

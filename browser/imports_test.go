package browser

import (
	"os/exec"
	"strings"
	"testing"
)

// The broker knows nothing of the runtime: it never imports runtime/...
func TestImportsNoRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/ensemblework/ensemble/runtime") {
			t.Errorf("browser imports %s", p)
		}
	}
}

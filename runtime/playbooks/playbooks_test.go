package playbooks

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestParsePlaybookRefusesBadFiles(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no front matter", "# hi", "must start"},
		{"unclosed", "---\nname: a\n", "closing"},
		{"missing when", "---\nname: a\ntitle: A\n---\n", "required"},
		{"unknown key", "---\nname: a\ntitle: A\nwhen: w\ncolour: red\n---\n", "unknown"},
		{"bad match", "---\nname: a\ntitle: A\nwhen: w\nmatch: (\n---\n", "match"},
	}
	for _, tt := range tests {
		if _, err := Parse(tt.src); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	_, err := Load(fstest.MapFS{
		"a.md": {Data: []byte("---\nname: a\ntitle: A\nwhen: w\n---\n")},
		"b.md": {Data: []byte("---\nname: a\ntitle: B\nwhen: w\n---\n")},
	})
	if err == nil || !strings.Contains(err.Error(), "taken") {
		t.Errorf("two playbooks of one name: %v", err)
	}
}

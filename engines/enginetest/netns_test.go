package enginetest

import (
	"regexp"
	"testing"
)

func TestRunPattern(t *testing.T) {
	tests := []struct {
		name, pattern string
	}{
		{"TestReal", `^TestReal$`},
		{"TestReal/Sub.Case", `^TestReal$/^Sub\.Case$`},
	}
	for _, tt := range tests {
		if got := runPattern(tt.name); got != tt.pattern {
			t.Errorf("runPattern(%q) = %q, want %q", tt.name, got, tt.pattern)
		}
		for _, part := range []string{tt.pattern} {
			if _, err := regexp.Compile(part); err != nil {
				t.Errorf("%q does not compile: %v", part, err)
			}
		}
	}
}

package tools

import (
	"strings"
	"testing"
)

func TestTitleList(t *testing.T) {
	if got := titleList([]string{"a", "b", "c", "d", "e", "f", "g"}); got != "“a”, “b”, “c”, “d”, “e” and 2 more" {
		t.Fatal(got)
	}
	if got := titleList([]string{"x", "x"}); got != "“x” and “x (2)”" {
		t.Fatal(got)
	}
	s := strings.Repeat("a", 5000) + strings.Repeat("z", 5000)
	if h := headAndTail(s, MaxToolResultChars); len([]rune(h)) > MaxToolResultChars || !strings.HasPrefix(h, "aaa") || !strings.HasSuffix(h, "zzz") {
		t.Fatal("headAndTail")
	}
}

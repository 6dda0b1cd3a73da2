package terminal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestTerminalHostFrames(t *testing.T) {
	tests := []struct {
		typ     byte
		payload []byte
	}{
		{frameHello, []byte("token")},
		{frameOutput, nil},
		{frameSize, sizePayload(120, 32)},
		{frameExit, exitPayload(-1)},
		{frameReplay, bytes.Repeat([]byte("x"), replayBytes)},
	}
	var buf bytes.Buffer
	for _, tt := range tests {
		if err := writeFrame(&buf, tt.typ, tt.payload); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range tests {
		typ, p, err := readFrame(&buf)
		if err != nil || typ != tt.typ || !bytes.Equal(p, tt.payload) {
			t.Fatalf("frame %c: got %c, %d bytes, %v", tt.typ, typ, len(p), err)
		}
	}
	if cols, rows, ok := parseSize(sizePayload(120, 32)); !ok || cols != 120 || rows != 32 {
		t.Errorf("size: %d×%d %v", cols, rows, ok)
	}
	if code, ok := parseExit(exitPayload(-1)); !ok || code != -1 {
		t.Errorf("exit: %d %v", code, ok)
	}
}

func TestTerminalHostFrameTooLong(t *testing.T) {
	if err := writeFrame(new(bytes.Buffer), frameOutput, make([]byte, maxFrame+1)); !errors.Is(err, errFrameTooLong) {
		t.Errorf("writeFrame: %v", err)
	}
	// A length over the bound is refused before anything is allocated for it.
	if _, _, err := readFrame(strings.NewReader("o\xff\xff\xff\xff")); !errors.Is(err, errFrameTooLong) {
		t.Errorf("readFrame: %v", err)
	}
}

func TestTerminalHostRing(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"empty", nil, ""},
		{"fits", []string{"ab", "cd"}, "abcd"},
		{"exactly full", []string{"abc", "de"}, "abcde"},
		{"overflows", []string{"abc", "def"}, "bcdef"},
		{"one write larger than the ring", []string{"ab", "0123456789"}, "56789"},
		{"cut: from the next line", []string{"ab\x1b[3", "1mc\nd"}, "d"},
		{"cut, no line: all kept", []string{"abc", "d\re"}, "bcd\re"},
		{"a line ending kept whole", []string{"ab\n", "cd"}, "ab\ncd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(5)
			for _, w := range tt.writes {
				r.Write([]byte(w))
			}
			if got := string(r.Bytes()); got != tt.want {
				t.Errorf("Bytes() = %q, want %q", got, tt.want)
			}
		})
	}
}

package terminal

import (
	"reflect"
	"strings"
	"testing"
)

func TestFrame(t *testing.T) {
	hide := func(s string) string { return strings.ReplaceAll(s, "hunter2", "[secret PW]") }
	for _, c := range []struct {
		name   string
		output string
		want   []Run // the first row
	}{
		{"plain, trailing blanks dropped", "$ ls   ", []Run{{T: "$ ls"}}},
		{"colours in runs", "\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[0m",
			[]Run{{T: "red", Fg: "#800000"}, {T: " and "}, {T: "bold green", Fg: "#008000", B: true}}},
		{"true colour and background kept at the end", "\x1b[38;2;1;2;3;48;2;250;250;250mhi \x1b[0m",
			[]Run{{T: "hi ", Fg: "#010203", Bg: "#fafafa"}}},
		{"italic, underline, dim", "\x1b[3mi\x1b[0m\x1b[4mu\x1b[0m\x1b[2md\x1b[0m", []Run{{T: "i", I: true}, {T: "u", U: true}, {T: "d", Dim: true}}},
		{"reverse spells out the default colours", "\x1b[7mrev\x1b[0m", []Run{{T: "rev", Fg: hexDefaultBg, Bg: hexDefaultFg}}},
		{"a kept secret makes the row one plain run", "\x1b[31mpw=\x1b[0mhunter2 ok", []Run{{T: "pw=[secret PW] ok"}}},
		{"empty row", "", []Run{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSession("ts1", t.TempDir(), "", 40, 3)
			s.feed([]byte(c.output))
			f := s.Frame(hide)
			if f.Cols != 40 || f.Rows != 3 || len(f.Lines) != 3 {
				t.Fatalf("size %dx%d, %d lines", f.Cols, f.Rows, len(f.Lines))
			}
			if !reflect.DeepEqual(f.Lines[0], c.want) {
				t.Errorf("row 0 = %#v\nwant %#v", f.Lines[0], c.want)
			}
		})
	}
	s := newSession("ts1", t.TempDir(), "", 20, 4)
	s.feed([]byte("\x1b]2;my title\x07one\r\ntwo"))
	if f := s.Frame(nil); f.Cursor != (Cursor{X: 3, Y: 1}) || f.Title != "my title" || f.Lines[1][0].T != "two" {
		t.Errorf("frame = %+v", f)
	}
	ch := s.Changed()
	select {
	case <-ch:
		t.Fatal("Changed is closed before any output")
	default:
	}
	s.feed([]byte("!"))
	<-ch
}

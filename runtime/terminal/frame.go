package terminal

import (
	"image/color"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
)

// Frame is the screen as a live view draws it (spec 002 §8.17): each row as runs of cells that
// look the same, so a page renders spans, not a terminal emulator.
type Frame struct {
	Cols, Rows int
	Cursor     Cursor
	Title      string
	Lines      [][]Run
}

// Cursor is where the cursor is, from the top left, in cells.
type Cursor struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Run is cells that look the same: their text and how they look; colours are #rrggbb, left out for
// the terminal's own.
type Run struct {
	T   string `json:"t"`
	Fg  string `json:"fg,omitempty"`
	Bg  string `json:"bg,omitempty"`
	B   bool   `json:"b,omitempty"`
	I   bool   `json:"i,omitempty"`
	U   bool   `json:"u,omitempty"`
	Dim bool   `json:"dim,omitempty"`
}

// hexDefaultFg and hexDefaultBg stand in for the terminal's own colours where a reversed cell
// needs them spelled out.
var hexDefaultFg, hexDefaultBg = hexOf(defaultFg), hexOf(defaultBg)

// Frame takes the screen now. hide hides kept secrets: a row whose text it changes is sent as one
// plain run of the hidden text, its colours dropped, so no run carries a piece of a secret.
func (s *Session) Frame(hide func(string) string) Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	cols, rows := s.emu.Width(), s.emu.Height()
	pos := s.emu.CursorPosition()
	f := Frame{Cols: cols, Rows: rows, Cursor: Cursor{X: pos.X, Y: pos.Y}, Title: s.title, Lines: make([][]Run, rows)}
	for y := range rows {
		line := []Run{} // an empty row is [], not null, on the wire
		var text, run strings.Builder
		var cur Run
		open := false
		for x := 0; x < cols; x++ {
			c := s.emu.CellAt(x, y)
			if c == nil {
				continue
			}
			t := c.Content
			if t == "" {
				t = " "
			}
			text.WriteString(t)
			if r := runOf(c.Style); !open || !sameLook(cur, r) {
				if open {
					cur.T = run.String()
					line = append(line, cur)
					run.Reset()
				}
				cur, open = r, true
			}
			run.WriteString(t)
			x += max(c.Width, 1) - 1
		}
		if open {
			cur.T = run.String()
			line = append(line, cur)
		}
		line = trimBlanks(line)
		if hide != nil {
			plain := strings.TrimRight(text.String(), " ")
			if h := hide(plain); h != plain {
				line = []Run{{T: h}}
			}
		}
		f.Lines[y] = line
	}
	return f
}

// Changed is closed at the next output, or at once when the session has ended.
func (s *Session) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outputLocked()
}

func runOf(st uv.Style) Run {
	r := Run{Fg: hexOrEmpty(st.Fg), Bg: hexOrEmpty(st.Bg), B: st.Attrs&uv.AttrBold != 0, I: st.Attrs&uv.AttrItalic != 0,
		U: st.Underline != 0, Dim: st.Attrs&uv.AttrFaint != 0}
	if st.Attrs&uv.AttrReverse != 0 {
		fg, bg := r.Fg, r.Bg
		if fg == "" {
			fg = hexDefaultFg
		}
		if bg == "" {
			bg = hexDefaultBg
		}
		r.Fg, r.Bg = bg, fg
	}
	return r
}

func sameLook(a, b Run) bool {
	a.T, b.T = "", ""
	return a == b
}

// trimBlanks drops the row's trailing blanks: spaces with no background of their own.
func trimBlanks(line []Run) []Run {
	for len(line) > 0 {
		last := &line[len(line)-1]
		if last.Bg != "" || last.U {
			break
		}
		last.T = strings.TrimRight(last.T, " ")
		if last.T != "" {
			break
		}
		line = line[:len(line)-1]
	}
	return line
}

func hexOrEmpty(c color.Color) string {
	if c == nil {
		return ""
	}
	return hexOf(c)
}

func hexOf(c color.Color) string {
	r, g, b, _ := c.RGBA()
	const digits = "0123456789abcdef"
	out := [7]byte{'#'}
	for i, v := range [3]uint32{r >> 8, g >> 8, b >> 8} {
		out[1+2*i], out[2+2*i] = digits[v>>4&0xf], digits[v&0xf]
	}
	return string(out[:])
}

package terminal

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The picture's cell size is the basic font's (7×13), and its colours where a cell has none.
const (
	cellW, cellH = 7, 13
)

var (
	defaultFg = color.RGBA{0xd0, 0xd0, 0xd0, 0xff}
	defaultBg = color.RGBA{0x1e, 0x1e, 0x1e, 0xff}
)

// boxRunes are line-drawing characters the basic font lacks, drawn as the ASCII a terminal
// without them shows.
var boxRunes = map[rune]rune{
	'─': '-', '━': '-', '│': '|', '┃': '|', '┌': '+', '┐': '+', '└': '+', '┘': '+', '├': '+', '┤': '+',
	'┬': '+', '┴': '+', '┼': '+', '╭': '+', '╮': '+', '╰': '+', '╯': '+', '█': '#', '▌': '#', '▐': '#',
	'░': ':', '▒': ':', '▓': '#', '…': '~', '•': '*', '·': '.',
}

// WritePNG draws the screen as a PNG, each cell in its colours, and reports its size in pixels.
func (s *Session) WritePNG(w io.Writer) (width, height int, err error) {
	s.mu.Lock()
	img := renderScreen(s.emu)
	s.mu.Unlock()
	b := img.Bounds()
	return b.Dx(), b.Dy(), png.Encode(w, img)
}

// renderScreen draws the emulator's screen with Go's basic 7×13 font.
func renderScreen(emu *vt.Emulator) *image.RGBA {
	cols, rows := emu.Width(), emu.Height()
	img := image.NewRGBA(image.Rect(0, 0, cols*cellW, rows*cellH))
	draw.Draw(img, img.Bounds(), image.NewUniform(defaultBg), image.Point{}, draw.Src)
	face := basicfont.Face7x13
	d := &font.Drawer{Dst: img, Face: face}
	for y := range rows {
		for x := 0; x < cols; x++ {
			c := emu.CellAt(x, y)
			if c == nil {
				continue
			}
			fg, bg := colorOr(c.Style.Fg, defaultFg), colorOr(c.Style.Bg, defaultBg)
			if c.Style.Attrs&uv.AttrReverse != 0 {
				fg, bg = bg, fg
			}
			wide := max(c.Width, 1)
			cell := image.Rect(x*cellW, y*cellH, (x+wide)*cellW, (y+1)*cellH)
			if bg != defaultBg {
				draw.Draw(img, cell, image.NewUniform(bg), image.Point{}, draw.Src)
			}
			if c.Content != "" && c.Content != " " {
				r := []rune(c.Content)[0]
				if a, ok := boxRunes[r]; ok {
					r = a
				}
				if _, ok := face.GlyphAdvance(r); !ok {
					r = '?'
				}
				d.Src = image.NewUniform(fg)
				d.Dot = fixed.P(x*cellW, y*cellH+face.Ascent)
				d.DrawString(string(r))
				if c.Style.Attrs&uv.AttrBold != 0 {
					d.Dot = fixed.P(x*cellW+1, y*cellH+face.Ascent) // bold: the glyph again, a pixel over
					d.DrawString(string(r))
				}
			}
			if c.Style.Underline != 0 {
				draw.Draw(img, image.Rect(cell.Min.X, cell.Max.Y-1, cell.Max.X, cell.Max.Y), image.NewUniform(fg), image.Point{}, draw.Src)
			}
			x += wide - 1
		}
	}
	return img
}

func colorOr(c color.Color, def color.RGBA) color.RGBA {
	if c == nil {
		return def
	}
	r, g, b, _ := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
}

package browser

import (
	"fmt"
	"image"
	_ "image/jpeg" // screenshots may be JPEG
	_ "image/png"
	"io"
	"math"
	"strings"
)

// The checks before a capture is sent or named in a report (spec 002 §8.16, spec 003's
// capture_check): its picture is not blank, and the page it came from showed the expected text.
// Nodes and runs check the same way.

// Check is one check of a capture, for a step's or a run's report.
type Check struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Note   string `json:"note"`
}

// CheckLines is checks as the model reads them, one a line: "Not blank passed: …".
func CheckLines(checks []Check) string {
	var lines []string
	for _, c := range checks {
		mark := "passed"
		if !c.Passed {
			mark = "FAILED"
		}
		lines = append(lines, fmt.Sprintf("%s %s: %s", c.Name, mark, c.Note))
	}
	return strings.Join(lines, "\n")
}

// BlankSpread is the brightness spread under which a picture counts as blank.
const BlankSpread = 2.0

// CheckCapture checks a capture's picture and, when expect is set, the page text kept beside it
// (kept false: none was, as for a held capture).
func CheckCapture(pic io.Reader, text string, kept bool, expect string) []Check {
	img, _, err := image.Decode(pic)
	if err != nil {
		return []Check{{Name: "Not blank", Note: "the file is not a picture this can read"}}
	}
	dev := brightnessSpread(img)
	checks := []Check{{Name: "Not blank", Passed: dev >= BlankSpread, Note: fmt.Sprintf("brightness spread %.1f (blank under %.0f)", dev, BlankSpread)}}
	want := strings.TrimSpace(expect)
	switch {
	case want == "":
	case !kept:
		checks = append(checks, Check{Name: "Expected text", Note: "no page text is kept for this capture"})
	case strings.Contains(strings.ToLower(text), strings.ToLower(want)):
		checks = append(checks, Check{Name: "Expected text", Passed: true, Note: fmt.Sprintf("the page showed %q", want)})
	default:
		checks = append(checks, Check{Name: "Expected text", Note: fmt.Sprintf("the page did not show %q", want)})
	}
	return checks
}

// brightnessSpread is the standard deviation of a picture's brightness (0–255), over at most
// about 40,000 of its pixels.
func brightnessSpread(img image.Image) float64 {
	b := img.Bounds()
	step := max(1, int(math.Sqrt(float64(b.Dx()*b.Dy())/40000)))
	var n, sum, sq float64
	for y := b.Min.Y; y < b.Max.Y; y += step {
		for x := b.Min.X; x < b.Max.X; x += step {
			r, g, bl, _ := img.At(x, y).RGBA()
			v := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			n, sum, sq = n+1, sum+v, sq+v*v
		}
	}
	if n == 0 {
		return 0
	}
	mean := sum / n
	return math.Sqrt(math.Max(0, sq/n-mean*mean))
}

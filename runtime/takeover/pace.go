package takeover

import "time"

// Step is one size and quality a browser's screencast is asked for.
type Step struct {
	MaxWidth int
	Quality  int
}

// Steps are the sizes and qualities a browser view moves between, best first (spec 002 §8.16.2,
// §8.17): control starts at the first, watching at the second, and a slow link moves down.
var Steps = []Step{{1280, 55}, {1024, 45}, {800, 40}, {640, 35}, {480, 30}}

// The pace's rules: a frame that took longer than SlowSend to send steps down at once; QuickRun
// frames in a row each sent within QuickSend step back up, never above the mode's own step.
const (
	SlowSend  = 250 * time.Millisecond
	QuickSend = 100 * time.Millisecond
	QuickRun  = 8
)

// Pace picks the screencast's step from how long frames take to send. It is pure (the caller
// measures the sends), so its rules have table tests; not safe for concurrent use.
type Pace struct {
	top   int // the mode's best step
	at    int
	quick int
}

// NewPace starts at the mode's best step: the first in control, the second watching.
func NewPace(mode string) *Pace {
	p := &Pace{}
	p.SetMode(mode)
	return p
}

func topOf(mode string) int {
	if mode == "control" {
		return 0
	}
	return 1
}

// SetMode moves to the mode's best step (taking control asks for the better picture at once) and
// answers whether the step changed.
func (p *Pace) SetMode(mode string) bool {
	was := p.at
	p.top, p.at, p.quick = topOf(mode), topOf(mode), 0
	return p.at != was
}

// Step is the step to ask for now.
func (p *Pace) Step() Step { return Steps[p.at] }

// Sent notes one frame's send took d, and answers whether the step changed.
func (p *Pace) Sent(d time.Duration) bool {
	switch {
	case d > SlowSend:
		p.quick = 0
		if p.at < len(Steps)-1 {
			p.at++
			return true
		}
	case d <= QuickSend:
		p.quick++
		if p.quick >= QuickRun && p.at > p.top {
			p.at, p.quick = p.at-1, 0
			return true
		}
	default:
		p.quick = 0
	}
	return false
}

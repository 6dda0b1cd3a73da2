package takeover

import (
	"testing"
	"time"
)

func TestPace(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	quick := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = ms(20)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		mode  string
		sends []time.Duration
		want  Step
	}{
		{"watching starts at 1024, 45", "watch", nil, Step{1024, 45}},
		{"control starts at 1280, 55", "control", nil, Step{1280, 55}},
		{"a slow send steps down", "control", []time.Duration{ms(400)}, Step{1024, 45}},
		{"a send of 250 ms is not slow", "control", []time.Duration{ms(250)}, Step{1280, 55}},
		{"slow sends go down to the last step and stay", "watch", []time.Duration{ms(900), ms(900), ms(900), ms(900), ms(900)}, Step{480, 30}},
		{"quick sends step back up", "control", append([]time.Duration{ms(400), ms(400)}, quick(QuickRun)...), Step{1024, 45}},
		{"not before QuickRun in a row", "control", append([]time.Duration{ms(400)}, quick(QuickRun-1)...), Step{1024, 45}},
		{"a middling send breaks the run", "control", append(append([]time.Duration{ms(400)}, quick(QuickRun-1)...), append([]time.Duration{ms(180)}, quick(1)...)...), Step{1024, 45}},
		{"watching never goes above 1024", "watch", quick(3 * QuickRun), Step{1024, 45}},
		{"back to the top in control", "control", append([]time.Duration{ms(400), ms(400)}, quick(2*QuickRun)...), Step{1280, 55}},
	} {
		p := NewPace(c.mode)
		for _, d := range c.sends {
			p.Sent(d)
		}
		if got := p.Step(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPaceSetMode(t *testing.T) {
	p := NewPace("watch")
	if !p.SetMode("control") || p.Step() != (Step{1280, 55}) {
		t.Fatalf("control: %v", p.Step())
	}
	if p.SetMode("control") {
		t.Error("the same mode again changed the step")
	}
	p.Sent(time.Second)
	p.Sent(time.Second) // at 800 now
	if !p.SetMode("watch") || p.Step() != (Step{1024, 45}) {
		t.Fatalf("watch: %v", p.Step())
	}
	if !p.Sent(time.Second) || p.Step() != (Step{800, 40}) {
		t.Fatalf("a slow send says the step changed: %v", p.Step())
	}
}

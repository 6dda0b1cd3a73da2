package browser

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// benchTab opens the 1,000-element page in a broker of its own.
func benchTab(b *testing.B) (*Broker, *tab, string) {
	needChromium(b)
	s := newSite(b, "")
	br := New(Config{DataDir: b.TempDir(), Headless: true})
	b.Cleanup(br.Close)
	p, err := br.Open(context.Background(), OpenOptions{Work: work, Owner: "bench", URL: s.URL + "/many"})
	if err != nil {
		b.Fatal(err)
	}
	t, _ := br.use(work, p.Tab, false)
	return br, t, p.Tab
}

// rawRoundTrip is the baseline: one Runtime.evaluate of 1+1 on the same tab.
func rawRoundTrip(b *testing.B, t *tab) time.Duration {
	const n = 50
	start := time.Now()
	for range n {
		if _, err := chromedp.Run(t.context(), chromedp.Evaluate[int]("1+1")); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / n
}

func BenchmarkSnapshot1000(b *testing.B) {
	br, t, id := benchTab(b)
	ctx := context.Background()
	base := rawRoundTrip(b, t)
	var refs int
	b.ResetTimer()
	for b.Loop() {
		s, err := br.Snapshot(ctx, work, id, SnapshotOptions{MaxChars: 1 << 20})
		if err != nil {
			b.Fatal(err)
		}
		refs = s.Refs
	}
	b.StopTimer()
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(refs), "refs")
	b.ReportMetric(float64(base.Microseconds()), "raw-µs")
	b.ReportMetric(float64(per)/float64(base), "x-raw")
}

func BenchmarkScreenshot1000(b *testing.B) {
	br, t, id := benchTab(b)
	ctx := context.Background()
	base := rawRoundTrip(b, t)
	b.ResetTimer()
	for b.Loop() {
		if _, err := br.Screenshot(ctx, work, id, ShotOptions{Width: 1280, Height: 800}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(base.Microseconds()), "raw-µs")
	b.ReportMetric(float64(per)/float64(base), "x-raw")
}

// BenchmarkGlance1000 is a run's live picture of that page: 640 px across, JPEG at 45.
func BenchmarkGlance1000(b *testing.B) {
	br, t, id := benchTab(b)
	ctx := context.Background()
	base := rawRoundTrip(b, t)
	var size int
	b.ResetTimer()
	for b.Loop() {
		g, err := br.Glance(ctx, work, id, 640, 45)
		if err != nil {
			b.Fatal(err)
		}
		size = len(g.Image)
	}
	b.StopTimer()
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(size)/1024, "KB")
	b.ReportMetric(float64(base.Microseconds()), "raw-µs")
	b.ReportMetric(float64(per)/float64(base), "x-raw")
}

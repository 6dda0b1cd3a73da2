package sessions

import (
	"context"
	"database/sql"
	"math"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/runtime/records"
)

// corpus is the rarity table: in how many of the person's latest tasks each term and each anchor
// appears. It is built from titles, labels and the first part of pages, and kept for a while.
type corpus struct {
	n        int
	df       map[string]int // terms and term pairs
	anchorDF map[string]int
	built    time.Time
}

// corpusDoc is one task as the rarity table reads it.
type corpusDoc struct {
	title, labels, page string
}

// pageHead is how much of a page the rarity table reads.
const pageHead = 2000

func buildCorpus(docs []corpusDoc, cfg Config) *corpus {
	extra, ubiq := setOf(cfg.Text.ExtraStopwords), setOf(cfg.Text.Ubiquitous)
	c := &corpus{n: len(docs), df: map[string]int{}, anchorDF: map[string]int{}}
	counts, anchors := map[string]float64{}, map[string]bool{}
	for _, d := range docs {
		clear(counts)
		clear(anchors)
		addTerms(counts, d.title, 1, extra)
		addTerms(counts, d.labels, 1, extra)
		addTerms(counts, d.page, 1, extra)
		for t := range counts {
			c.df[t]++
		}
		anchorsOf(d.title+"\n"+d.page, ubiq, anchors)
		for a := range anchors {
			c.anchorDF[a]++
		}
	}
	return c
}

// idf is ln((N+1)/(df+1)): a term in nearly every task weighs about nothing.
func (c *corpus) idf(term string) float64 {
	return math.Log(float64(c.n+1) / float64(c.df[term]+1))
}

// vector weighs counted terms: (1 + ln tf) × idf.
func (c *corpus) vector(counts map[string]float64) map[string]float64 {
	v := make(map[string]float64, len(counts))
	for t, tf := range counts {
		if tf <= 0 {
			continue
		}
		if w := (1 + math.Log(math.Max(tf, 1))) * c.idf(t); w > 0 {
			v[t] = w
		}
	}
	return v
}

// topic is the cosine of two vectors, counted only when they share at least minShared terms that
// are not common (in at most half the tasks), and scaled down while the corpus is small.
func (c *corpus) topic(a, b map[string]float64, cfg Config) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	var dot, na, nb float64
	shared := 0
	for t, wa := range a {
		if wb, ok := b[t]; ok {
			dot += wa * wb
			if 2*c.df[t] <= c.n {
				shared++
			}
		}
		na += wa * wa
	}
	if shared < cfg.Limits.TopicMinShared || dot == 0 {
		return 0
	}
	for _, wb := range b {
		nb += wb * wb
	}
	cos := dot / math.Sqrt(na*nb)
	if c.n < cfg.Limits.MinCorpus {
		cos *= float64(c.n) / float64(cfg.Limits.MinCorpus)
	}
	return math.Min(1, cos)
}

// commonAnchor: an anchor in more than the configured share of the tasks does not count.
func (c *corpus) commonAnchor(a string, cfg Config) bool {
	if c.n == 0 {
		return false
	}
	return float64(c.anchorDF[a]) > cfg.Limits.AnchorMaxDocShare*float64(c.n)
}

// corpusCache keeps the rarity table for limits.corpusTtlMinutes.
type corpusCache struct {
	mu  sync.Mutex // guards c
	c   *corpus
	cfg string // the config hash it was built under
}

func (cc *corpusCache) get(ctx context.Context, db *sql.DB, cfg Config, now time.Time) (*corpus, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.c != nil && cc.cfg == cfg.Hash() && now.Sub(cc.c.built) < time.Duration(cfg.Limits.CorpusTTLMinutes)*time.Minute {
		return cc.c, nil
	}
	heads, err := records.RecentTaskHeads(ctx, db, pageHead, cfg.Limits.CorpusTasks)
	if err != nil {
		return nil, err
	}
	docs := make([]corpusDoc, len(heads))
	for i, h := range heads {
		docs[i] = corpusDoc{title: h.Title, labels: h.LabelsJSON, page: h.Page}
	}
	c := buildCorpus(docs, cfg)
	c.built = now
	cc.c, cc.cfg = c, cfg.Hash()
	return c, nil
}

// invalidate drops the table, so the next decision builds it again.
func (cc *corpusCache) invalidate() {
	cc.mu.Lock()
	cc.c = nil
	cc.mu.Unlock()
}

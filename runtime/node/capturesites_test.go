package node

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

func TestCaptureSites(t *testing.T) {
	f := newFixture(t)
	s, ctx := f.svc, context.Background()
	got, err := s.SetCaptureSites(ctx, SitePreview, []string{" Bank.Example.com. ", "https://mail.example.org/inbox", "bank.example.com", ""})
	if err != nil || !slices.Equal(got, []string{"bank.example.com", "mail.example.org"}) {
		t.Fatalf("preview sites: %v %v", got, err)
	}
	if _, err := s.SetCaptureSites(ctx, SiteNever, []string{"health.example", "mail.example.org"}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.PreviewSites(ctx); !slices.Equal(p, []string{"bank.example.com"}) {
		t.Fatalf("a site marked never stays in preview: %v", p)
	}
	for site, want := range map[string]string{
		"bank.example.com": SitePreview, "login.bank.example.com": SitePreview, "example.com": "",
		"health.example": SiteNever, "my.health.example": SiteNever, "mail.example.org": SiteNever,
		"notbank.example.com": "", "": "",
	} {
		if got := s.SiteRule(ctx, site); got != want {
			t.Errorf("SiteRule(%q) = %q, want %q", site, got, want)
		}
	}
	for _, bad := range [][]string{{"a site/with a path"}, {"tab\there"}} {
		if _, err := s.SetCaptureSites(ctx, SiteNever, bad); err == nil {
			t.Errorf("%q was taken as a site", bad)
		}
	}
	if _, err := s.SetCaptureSites(ctx, "sometimes", nil); err == nil {
		t.Error("a rule that is not preview or never was taken")
	}
	if n, _ := s.CaptureSites(ctx, SiteNever); !slices.Equal(n, []string{"health.example", "mail.example.org"}) {
		t.Fatalf("a refused list changed the kept one: %v", n)
	}
}

// A site the owner never has captured gives no picture at all: nothing kept, shown or held, and
// the node is told to read the page's text instead.
func TestNeverCapturedSite(t *testing.T) {
	f, _ := shotsShowing(t, "Your results are normal.")
	n := f.node("Ada")
	if _, err := f.svc.SetCaptureSites(context.Background(), SiteNever, []string{"example.com"}); err != nil {
		t.Fatal(err)
	}
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "https://example.com/"}).When(enginetest.Match{LastUserContains: "screenshot of example"}),
		enginetest.ToolCall(ToolBrowserScreenshot, map[string]any{"tab": "t1"}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "Tab t1: example.com"}),
		enginetest.Say("I may not capture it.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "never has example.com captured"}),
	)
	f.post(n.DMRoomID, "Take a screenshot of example.com please.")
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	if got := f.nodeTexts(n.DMRoomID)[0]; got != "I may not capture it." {
		t.Fatalf("the reply: %q", got)
	}
	if files, cards := fileMessages(f, n.DMRoomID), len(f.cards(n.DMRoomID, CardMediaPreview)); files != 0 || cards != 0 {
		t.Fatalf("%d file messages and %d preview cards of a site never captured", files, cards)
	}
	for _, r := range f.model.Requests() {
		raw, _ := json.Marshal(r.Messages)
		if strings.Contains(string(raw), "results are normal") {
			t.Fatal("the model read what the dropped picture showed")
		}
	}
}

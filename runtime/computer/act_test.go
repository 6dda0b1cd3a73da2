package computer

import (
	"testing"

	"github.com/ensemblework/ensemble/runtime/judge"
)

func TestDecideAct(t *testing.T) {
	p := Policy{Kept: []Scope{{ScopeAct, "shop.example.com delete"}, {ScopeAddress, "shop.example.com order"}},
		Granted: []Scope{{ScopeAct, "mail.example.com send"}}}
	for _, tc := range []struct {
		name, url, element string
		want               judge.Decision
		rung               Rung
		always             bool
	}{
		{"an order, asked", "https://shop.example.com/cart", "Place order", judge.Ask, RungAsk, false},
		{"an address answer covers no order", "https://shop.example.com/cart", "Order now", judge.Ask, RungAsk, false},
		{"kept for the mission", "https://shop.example.com/cart", "Delete item", judge.Allow, RungKept, false},
		{"once", "https://mail.example.com/", "Send", judge.Allow, RungOnce, false},
		{"another site", "https://other.example.com/", "Delete item", judge.Ask, RungAsk, false},
		{"no such word", "https://shop.example.com/cart", "Details", judge.Refuse, RungFloor, false},
		{"no page", "", "Pay", judge.Refuse, RungFloor, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Call{Op: OpAct, Folder: "/x", URL: tc.url, Command: tc.element}, p)
			if d.Decision != tc.want || d.Rung != tc.rung || d.Always != tc.always {
				t.Fatalf("got %v/%v always %v (%s), want %v/%v", d.Decision, d.Rung, d.Always, d.Reason, tc.want, tc.rung)
			}
		})
	}
}

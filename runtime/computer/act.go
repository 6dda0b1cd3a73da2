package computer

import (
	"net/url"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/judge"
)

// OpAct is a consequential action on a page (spec 002 §8.16): a click on an element whose name
// buys, pays, sends, deletes or publishes for the owner, which their own words did not ask for.
// Call.URL is the page, Call.Command the element's name.
const OpAct Op = "act"

// ScopeAct keeps an answer for one kind of action on one site: "<host> <word>" (shop.example order).
const ScopeAct = "act"

// decideAct: an action the owner did not ask for is asked each time on a card (Once, or for the
// mission), kept by site and word; never Always, since the next order is another order.
func decideAct(c Call, p Policy) Decision {
	u, err := url.Parse(c.URL)
	word := browser.Consequential(c.Command)
	if err != nil || u.Hostname() == "" || word == "" {
		return refused("An action on a page names the page and the element it clicks.")
	}
	scope := u.Hostname() + " " + word
	if _, ok := match(scope, ScopeAct, p.Granted); ok {
		return Decision{Decision: judge.Allow, Rung: RungOnce}
	}
	if _, ok := match(scope, ScopeAct, p.Kept); ok {
		return Decision{Decision: judge.Allow, Rung: RungKept}
	}
	return Decision{Decision: judge.Ask, Rung: RungAsk, Ask: []Scope{{ScopeAct, scope}},
		Reason: "Clicking it would " + word + " on " + u.Hostname() + " for your owner, which their own words did not ask for."}
}

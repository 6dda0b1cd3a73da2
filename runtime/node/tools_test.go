package node

import (
	"slices"
	"testing"
)

// The session tools go only to the owner's turns that need them: words about work for a coding
// agent, a node already driving sessions, or a turn carrying work on.
func TestToolsForOffersSessionToolsByNeed(t *testing.T) {
	dm := Room{Kind: RoomDM}
	owner := Turn{Lane: "conv:r:s", Reason: ReasonMessage, ByOwner: true}
	for _, c := range []struct {
		name     string
		turn     Turn
		text     string
		codeTalk bool
		want     bool
	}{
		{"plain question", owner, "What is on my list today?", false, false},
		{"a greeting", owner, "Good morning!", false, false},
		{"a fix", owner, "Fix the login retry bug", false, true},
		{"a folder", owner, "Please write a greeting for the team in /tmp/work/site", false, true},
		{"a home path", owner, "look in ~/code", false, true},
		{"an agent", owner, "ask Claude to do it", false, true},
		{"a file name", owner, "what does main.go say", false, true},
		{"the node drives sessions", owner, "and then?", true, true},
		{"a card's answer", Turn{Lane: "conv:r:s", Reason: ReasonApproval, ByOwner: true}, "ok", false, true},
		{"not the owner", Turn{Lane: "conv:r:s", Reason: ReasonMessage}, "Fix the login retry bug", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := slices.Contains(toolsFor(c.turn, dm, Node{}, c.text, c.codeTalk), ToolSessionStart)
			if got != c.want {
				t.Fatalf("session tools offered: %v, want %v", got, c.want)
			}
		})
	}
}

package node

import (
	"slices"
	"testing"
)

var (
	lead   = Member{NodeID: "n-lead", Handle: "manager", Role: "manager"}
	dev    = Member{NodeID: "n-dev", Handle: "developer", Role: "developer"}
	tester = Member{NodeID: "n-test", Handle: "tester", Role: "tester"}
	writer = Member{NodeID: "n-write", Handle: "writer", Role: "writer"}
)

func paused(m Member) Member { m.Paused = true; return m }

func crew(leadID string, ms ...Member) RouteRoom {
	return RouteRoom{Kind: RoomCrew, LeadID: leadID, Members: ms}
}

func dm(m Member) RouteRoom { return RouteRoom{Kind: RoomDM, DMNode: m.NodeID, Members: []Member{m}} }

func task(ms ...Member) RouteRoom { return RouteRoom{Kind: RoomTask, Members: ms} }

func owner(body string) RouteMessage { return RouteMessage{FromPerson: true, Kind: "text", Body: body} }

func from(m Member, body string) RouteMessage {
	return RouteMessage{FromNode: m.NodeID, Kind: "text", Body: body}
}

func many(n int) []Member {
	var out []Member
	for i := range n {
		h := string(rune('a' + i))
		out = append(out, Member{NodeID: "n-" + h, Handle: h, Role: "developer"})
	}
	return out
}

func ids(ms ...Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.NodeID)
	}
	return out
}

const runLine = "Nodes have written 8 messages in a row here, so none was woken; write to carry on."
const depthLine = "This chain of replies is 12 deep, so no node was woken; write to carry on."

func TestWhoSpeaks(t *testing.T) {
	team := crew("", lead, dev, tester, writer)
	cases := []struct {
		name string
		room RouteRoom
		msg  RouteMessage
		st   RouteState
		want Route
	}{
		// Rule 1: cards and system lines.
		{"card wakes nobody", dm(dev), RouteMessage{FromPerson: true, Kind: "approval", Body: "@developer"}, RouteState{}, Route{}},
		{"status line wakes nobody in a crew", team, RouteMessage{FromPerson: true, Kind: "status"}, RouteState{}, Route{}},
		{"run card from a node wakes nobody", task(dev, tester), RouteMessage{FromNode: dev.NodeID, Kind: "run", Body: "@tester"}, RouteState{}, Route{}},
		{"empty kind is not text", dm(dev), RouteMessage{FromPerson: true, Body: "hi"}, RouteState{}, Route{}},

		// Rule 2: a private message routes like a public one locally.
		{"private in a DM", dm(dev), RouteMessage{FromPerson: true, Kind: "text", Body: "hi", Private: true}, RouteState{}, Route{Wake: ids(dev)}},
		{"private in a crew", team, RouteMessage{FromPerson: true, Kind: "text", Body: "@tester look", Private: true}, RouteState{}, Route{Wake: ids(tester)}},

		// Rule 3: crews.
		{"crew: no mention, the manager answers", team, owner("build it"), RouteState{}, Route{Wake: ids(lead)}},
		{"crew: the one mentioned answers", team, owner("@tester check the login"), RouteState{}, Route{Wake: ids(tester)}},
		{"crew: the one mentioned twice answers", team, owner("@Tester, @tester!"), RouteState{}, Route{Wake: ids(tester)}},
		{"crew: two mentioned, the lead answers", team, owner("@tester and @developer"), RouteState{}, Route{Wake: ids(lead)}},
		{"crew: everyone, the lead answers", team, owner("@everyone hello"), RouteState{}, Route{Wake: ids(lead)}},
		{"crew: only people mentioned, the lead answers", team, owner("ask @ana about it"), RouteState{}, Route{Wake: ids(lead)}},
		{"crew: set lead answers", crew(dev.NodeID, lead, dev, tester), owner("go"), RouteState{}, Route{Wake: ids(dev)}},
		{"crew: set lead no longer a member, the manager answers", crew("n-gone", dev, lead), owner("go"), RouteState{}, Route{Wake: ids(lead)}},
		{"crew: no manager, the first member answers", crew("", tester, dev), owner("go"), RouteState{}, Route{Wake: ids(tester)}},
		{"crew: no members", crew(""), owner("go"), RouteState{}, Route{}},
		{"crew: a node's message wakes nobody", team, from(lead, "@developer please build"), RouteState{NodeRun: 1, Depth: 1}, Route{}},
		{"crew: a node's message never brakes", team, from(lead, "@developer"), RouteState{NodeRun: 20, Depth: 20}, Route{}},
		{"crew: everyone in a crew of one wakes it", crew("", dev), owner("@nodes"), RouteState{}, Route{Wake: ids(dev)}},

		// Rule 6 in crews.
		{"crew: mention resumes a paused node while the lead answers", crew("", lead, paused(dev), tester), owner("@developer and @tester"), RouteState{},
			Route{Wake: ids(lead), Resume: ids(dev)}},
		{"crew: the one mentioned is paused: resumed and answers", crew("", lead, paused(dev)), owner("@developer"), RouteState{},
			Route{Wake: ids(dev), Resume: ids(dev)}},
		{"crew: paused lead not mentioned: nobody answers", crew("", paused(lead), dev), owner("go"), RouteState{}, Route{}},
		{"crew: paused lead named with another: resumed and answers", crew("", paused(lead), dev), owner("@manager @developer"), RouteState{},
			Route{Wake: ids(lead), Resume: ids(lead)}},
		{"crew: paused lead, a paused node named with another", crew("", paused(lead), paused(dev), tester), owner("@developer @tester"), RouteState{},
			Route{Resume: ids(dev)}},
		{"crew: everyone resumes nobody", crew("", lead, paused(dev)), owner("@everyone"), RouteState{}, Route{Wake: ids(lead)}},

		// Rule 4: DMs and task rooms, the person's message.
		{"dm: no mention, its node answers", dm(dev), owner("hi"), RouteState{}, Route{Wake: ids(dev)}},
		{"dm: its node mentioned", dm(dev), owner("@developer hi"), RouteState{}, Route{Wake: ids(dev)}},
		{"dm: unknown mention ignored, its node answers", dm(dev), owner("@tester hi"), RouteState{}, Route{Wake: ids(dev)}},
		{"dm: its node missing from the members still answers", RouteRoom{Kind: RoomDM, DMNode: dev.NodeID}, owner("hi"), RouteState{}, Route{Wake: ids(dev)}},
		{"dm: without a node, nobody", RouteRoom{Kind: RoomDM}, owner("hi"), RouteState{}, Route{}},
		{"task: a member's handle in capitals still matches", task(Member{NodeID: "n-x", Handle: "QA-Bot"}), owner("@qa-bot"), RouteState{}, Route{Wake: []string{"n-x"}}},
		{"dm: an email is no mention", dm(dev), owner("mail developer@example.com"), RouteState{}, Route{Wake: ids(dev)}},
		{"task: mentions wake in mention order", task(dev, tester), owner("@tester then @developer"), RouteState{}, Route{Wake: ids(tester, dev)}},
		{"task: no mention, nobody", task(dev, tester), owner("hello"), RouteState{}, Route{}},
		{"task: only unknown mentions, nobody", task(dev, tester), owner("@ana"), RouteState{}, Route{}},
		{"task: everyone wakes all in member order", task(dev, tester), owner("@everyone"), RouteState{}, Route{Wake: ids(dev, tester)}},
		{"task: everyone capped", task(many(8)...), owner("@nodes go"), RouteState{}, Route{Wake: ids(many(6)...)}},
		{"task: explicit then everyone, no duplicates", task(dev, tester, writer), owner("@writer @everyone"), RouteState{}, Route{Wake: ids(writer, dev, tester)}},
		{"task: person's message ignores brakes", task(dev, tester), owner("@tester"), RouteState{NodeRun: 30, Depth: 30, Braked: true}, Route{Wake: ids(tester)}},

		// Rule 4: a node's message.
		{"task: a node wakes the node it mentions", task(dev, tester), from(dev, "@tester check"), RouteState{NodeRun: 1, Depth: 1}, Route{Wake: ids(tester)}},
		{"task: a node never wakes itself", task(dev, tester), from(dev, "@developer here, @tester"), RouteState{}, Route{Wake: ids(tester)}},
		{"task: a node without mentions wakes nobody", task(dev, tester), from(dev, "done"), RouteState{}, Route{}},
		{"task: a node's everyone wakes the others", task(dev, tester, writer), from(dev, "@everyone"), RouteState{}, Route{Wake: ids(tester, writer)}},
		{"task: a node's everyone is capped without counting itself", task(many(8)...), from(many(1)[0], "@everyone"), RouteState{}, Route{Wake: ids(many(7)[1:]...)}},
		{"dm: a node's message in its DM wakes nobody", dm(dev), from(dev, "done"), RouteState{}, Route{}},
		{"dm: a node's mention of itself wakes nobody", dm(dev), from(dev, "@developer"), RouteState{}, Route{}},

		// Rule 5: brakes.
		{"dm: run brake", RouteRoom{Kind: RoomDM, DMNode: dev.NodeID, Members: []Member{dev, tester}}, from(dev, "@tester"), RouteState{NodeRun: 8, Depth: 3},
			Route{Brake: runLine}},
		{"dm: one under the run brake", RouteRoom{Kind: RoomDM, DMNode: dev.NodeID, Members: []Member{dev, tester}}, from(dev, "@tester"), RouteState{NodeRun: 7, Depth: 11},
			Route{Wake: ids(tester)}},
		{"dm: depth brake", RouteRoom{Kind: RoomDM, DMNode: dev.NodeID, Members: []Member{dev, tester}}, from(dev, "@tester"), RouteState{NodeRun: 2, Depth: 12},
			Route{Brake: depthLine}},
		{"dm: already braked, nothing said", RouteRoom{Kind: RoomDM, DMNode: dev.NodeID, Members: []Member{dev, tester}}, from(dev, "@tester"), RouteState{NodeRun: 9, Braked: true},
			Route{}},
		{"task: no run brake", task(dev, tester), from(dev, "@tester"), RouteState{NodeRun: 40, Depth: 11}, Route{Wake: ids(tester)}},
		{"task: depth brake", task(dev, tester), from(dev, "@tester"), RouteState{NodeRun: 40, Depth: 12}, Route{Brake: depthLine}},
		{"task: depth brake once", task(dev, tester), from(dev, "@tester"), RouteState{Depth: 13, Braked: true}, Route{}},
		{"task: no brake when nobody would wake", task(dev, tester), from(dev, "done"), RouteState{Depth: 20}, Route{}},

		// Rule 6: paused nodes in DMs and task rooms.
		{"dm: owner's message resumes its paused node", dm(paused(dev)), owner("are you there?"), RouteState{}, Route{Wake: ids(dev), Resume: ids(dev)}},
		{"dm: owner's everyone in its DM resumes it", dm(paused(dev)), owner("@everyone"), RouteState{}, Route{Wake: ids(dev), Resume: ids(dev)}},
		{"task: owner's mention resumes a paused node", task(paused(dev), tester), owner("@developer"), RouteState{}, Route{Wake: ids(dev), Resume: ids(dev)}},
		{"task: everyone is capped after paused nodes are skipped", task(append([]Member{paused(dev)}, many(6)...)...), owner("@everyone"), RouteState{}, Route{Wake: ids(many(6)...)}},
		{"task: everyone skips a paused node", task(paused(dev), tester), owner("@everyone"), RouteState{}, Route{Wake: ids(tester)}},
		{"task: a node's mention never wakes a paused node", task(dev, paused(tester)), from(dev, "@tester"), RouteState{}, Route{}},
		{"task: a node's mention wakes the others but not the paused", task(dev, paused(tester), writer), from(dev, "@tester @writer"), RouteState{}, Route{Wake: ids(writer)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := WhoSpeaks(c.room, c.msg, c.st)
			if !slices.Equal(got.Wake, c.want.Wake) || !slices.Equal(got.Resume, c.want.Resume) || got.Brake != c.want.Brake {
				t.Errorf("WhoSpeaks = %+v, want %+v", got, c.want)
			}
			if got.Brake != "" && len(got.Wake) > 0 {
				t.Errorf("a brake fired and still woke %v", got.Wake)
			}
			for _, id := range got.Resume {
				if !slices.Contains(ids(c.room.Members...), id) {
					t.Errorf("resumed %s, which is not a member", id)
				}
			}
		})
	}
}

func TestCrewLead(t *testing.T) {
	cases := []struct {
		name    string
		members []Member
		leadID  string
		want    string
	}{
		{"set lead", []Member{lead, dev}, dev.NodeID, dev.NodeID},
		{"set lead gone", []Member{dev, lead}, "n-gone", lead.NodeID},
		{"manager", []Member{dev, lead}, "", lead.NodeID},
		{"first manager", []Member{dev, lead, {NodeID: "n-m2", Role: "manager"}}, "", lead.NodeID},
		{"first member", []Member{tester, dev}, "", tester.NodeID},
		{"none", nil, "", ""},
		{"none with a set lead", nil, dev.NodeID, ""},
	}
	for _, c := range cases {
		if got := CrewLead(c.members, c.leadID); got != c.want {
			t.Errorf("%s: CrewLead = %q, want %q", c.name, got, c.want)
		}
	}
}

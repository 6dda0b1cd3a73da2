package node

import (
	"fmt"
	"slices"
	"strings"
)

// RoomKind is what sort of room a message was posted in: "dm", "crew" or "task".
type RoomKind string

const (
	RoomDM   RoomKind = "dm"   // the owner and one node
	RoomCrew RoomKind = "crew" // the owner and the nodes they picked, one of them the lead
	RoomTask RoomKind = "task" // a node and the helper it brought in; the owner only reads
)

// Limits on how far nodes may talk among themselves before a person writes again (spec 002 §4).
const (
	MaxNodeRun     = 8  // node messages in a row in one room
	MaxDepth       = 12 // replies in one chain under a person's message
	MaxMentionWake = 6  // nodes one message may wake
)

// Member is a node in a room, as routing sees it.
type Member struct {
	NodeID string
	Handle string // the node's slug, without "@"
	Role   string // "manager", "developer", ...
	Paused bool
}

// RouteRoom is the room a message was posted in.
type RouteRoom struct {
	Kind    RoomKind
	DMNode  string   // a DM's node id
	LeadID  string   // a crew's set lead ("" for none)
	Members []Member // its nodes, in the order they joined
}

// RouteMessage is the message being routed.
type RouteMessage struct {
	FromPerson bool   // the person (the owner) wrote it; false: a node wrote it
	FromNode   string // the writing node's id when !FromPerson
	Kind       string // "text" or a card/system kind: "approval","run","plan","status","request","error"
	Body       string
	Private    bool // visible only to the owner ("Only me")
}

// RouteState is what the room's recent past says, for the brakes.
type RouteState struct {
	NodeRun int  // node messages in a row at the end of the room, counting this one when a node wrote it
	Depth   int  // the chain depth of this message: 0 for a person's message, parent's depth+1 for a node reply
	Braked  bool // a brake status line was already posted since the person last wrote
}

// Route is who answers.
type Route struct {
	Wake   []string // node ids to wake, in order, no duplicates
	Resume []string // paused node ids the owner's message resumes (they are also in Wake when they answer)
	Brake  string   // when non-empty: the one status line to post (a brake fired); Wake is then empty
}

// WhoSpeaks decides which nodes answer a message. It is pure: the caller reads the room, its
// members and the brake state, and acts on the Route (resumes, then queues turns, or posts the
// brake line). The local runtime has exactly one person, the owner, and every node is theirs.
func WhoSpeaks(room RouteRoom, m RouteMessage, st RouteState) Route {
	// Cards and system lines (approvals, run cards, plans, status lines, errors) are the
	// runtime talking; answering them would loop.
	if m.Kind != "text" {
		return Route{}
	}
	members := audience(room.Members, m)
	if room.Kind == RoomCrew {
		return crewRoute(room, members, m)
	}
	if m.FromPerson {
		return personRoute(room, members, m)
	}
	return nodeRoute(room, members, m, st)
}

// audience is the nodes that may see, and so answer, a message. A private message wakes only
// the nodes of the people it is visible to. Locally that person is the owner and every node is
// theirs, so nobody is dropped; the rule stays here so a room with other people has one place
// to add it.
func audience(members []Member, m RouteMessage) []Member {
	if !m.Private {
		return members
	}
	var out []Member
	for _, mb := range members {
		if ownedByReader(mb) {
			out = append(out, mb)
		}
	}
	return out
}

// ownedByReader reports whether a node belongs to a person who can read a private message.
// Locally the owner is the only person and every node is theirs.
func ownedByReader(Member) bool { return true }

// crewRoute: the owner's message is answered by exactly one node, the one they mention alone,
// else the lead, which coordinates the others through a plan. Nodes' messages wake nobody.
func crewRoute(room RouteRoom, members []Member, m RouteMessage) Route {
	if !m.FromPerson {
		return Route{}
	}
	named, explicit := mentioned(members, Mentions(m.Body))
	var r Route
	// The owner's mention resumes a paused node even when someone else answers, so the
	// lead's plan can use it.
	for _, mb := range explicit {
		if mb.Paused {
			r.Resume = append(r.Resume, mb.NodeID)
		}
	}
	var answer Member
	if len(named) == 1 {
		answer = named[0]
	} else {
		lead, ok := memberByID(members, CrewLead(members, room.LeadID))
		if !ok {
			return r
		}
		answer = lead
	}
	if answer.Paused && !slices.Contains(r.Resume, answer.NodeID) {
		return r // a paused lead nobody named stays asleep, and no one answers for it
	}
	r.Wake = []string{answer.NodeID}
	return r
}

// personRoute: in a DM or a task room, the owner's message wakes the nodes it mentions, else
// the DM's node. A paused node wakes, and is resumed, only when named or in its own DM.
func personRoute(room RouteRoom, members []Member, m RouteMessage) Route {
	named, explicit := mentioned(members, Mentions(m.Body))
	var r Route
	if len(named) == 0 {
		if room.Kind != RoomDM || room.DMNode == "" {
			return r
		}
		dm, ok := memberByID(members, room.DMNode)
		if ok && dm.Paused {
			r.Resume = append(r.Resume, dm.NodeID)
		}
		r.Wake = []string{room.DMNode}
		return r
	}
	for _, mb := range named {
		if mb.Paused {
			// @everyone is not a message to a paused node; only its own name or its DM is.
			if !containsMember(explicit, mb.NodeID) && !(room.Kind == RoomDM && mb.NodeID == room.DMNode) {
				continue
			}
			r.Resume = append(r.Resume, mb.NodeID)
		}
		r.Wake = append(r.Wake, mb.NodeID)
	}
	r.Wake = capWake(r.Wake)
	// A paused node cut by the cap stays paused: resume only the nodes that answer.
	r.Resume = slices.DeleteFunc(r.Resume, func(id string) bool { return !slices.Contains(r.Wake, id) })
	return r
}

// nodeRoute: a node's message in a DM or a task room wakes only the other nodes it mentions,
// never a paused one, until the brakes stop a conversation nodes are having among themselves.
func nodeRoute(room RouteRoom, members []Member, m RouteMessage, st RouteState) Route {
	named, _ := mentioned(members, Mentions(m.Body))
	var wake []string
	for _, mb := range named {
		if mb.NodeID != m.FromNode && !mb.Paused {
			wake = append(wake, mb.NodeID)
		}
	}
	wake = capWake(wake)
	if len(wake) == 0 {
		return Route{} // nobody would wake, so no brake needs saying so
	}
	var line string
	switch {
	// A task room holds only nodes' messages, so a run there says nothing; only depth counts.
	case room.Kind != RoomTask && st.NodeRun >= MaxNodeRun:
		line = fmt.Sprintf("Nodes have written %d messages in a row here, so none was woken; write to carry on.", MaxNodeRun)
	case st.Depth >= MaxDepth:
		line = fmt.Sprintf("This chain of replies is %d deep, so no node was woken; write to carry on.", MaxDepth)
	default:
		return Route{Wake: wake}
	}
	if st.Braked {
		return Route{} // the room already says why; once until the person writes again
	}
	return Route{Brake: line}
}

// CrewLead is the node that answers a crew: its set lead while that is a member, else its
// first manager, else its first node; "" for a crew without nodes.
func CrewLead(members []Member, leadID string) string {
	if _, ok := memberByID(members, leadID); ok && leadID != "" {
		return leadID
	}
	for _, mb := range members {
		if mb.Role == "manager" {
			return mb.NodeID
		}
	}
	if len(members) > 0 {
		return members[0].NodeID
	}
	return ""
}

// mentioned resolves a message's mentions to members: named is everyone it wakes, in mention
// order (@everyone and @nodes add all members in member order), without duplicates; explicit is only those named by their own handle. Handles that match no
// member, such as a person's, are ignored.
func mentioned(members []Member, handles []string) (named, explicit []Member) {
	for _, h := range handles {
		if ReservedHandle(h) {
			for _, mb := range members {
				if !containsMember(named, mb.NodeID) {
					named = append(named, mb)
				}
			}
			continue
		}
		for _, mb := range members {
			if strings.ToLower(mb.Handle) == h {
				explicit = append(explicit, mb)
				if !containsMember(named, mb.NodeID) {
					named = append(named, mb)
				}
				break
			}
		}
	}
	return named, explicit
}

// capWake keeps the first MaxMentionWake of the nodes a message wakes, after the ones it may
// not wake (itself, paused nodes) are gone, so they do not use up places.
func capWake(ids []string) []string {
	if len(ids) > MaxMentionWake {
		return ids[:MaxMentionWake]
	}
	return ids
}

func memberByID(members []Member, id string) (Member, bool) {
	for _, mb := range members {
		if mb.NodeID == id {
			return mb, true
		}
	}
	return Member{}, false
}

func containsMember(members []Member, id string) bool {
	_, ok := memberByID(members, id)
	return ok
}

package node

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// proposeNode makes the node its owner asked for: at once when the node may make nodes
// (autonomy.createNodes auto), else on a card it waits for (spec 002 §6.1).
func (s *Service) proposeNode(ctx context.Context, c *turnCtx, in createIn) (tools.Result, error) {
	nn := NewNode{Name: in.Name, Role: in.Role, Charter: in.Charter, TemplateID: in.TemplateID, Slug: in.Slug}
	if err := s.checkNewNode(ctx, nn); err != nil {
		return tools.Result{}, err
	}
	if c.node.Autonomy.CreateNodes == "auto" {
		n, err := s.Create(ctx, nn)
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Summary: fmt.Sprintf("Made the node %s (@%s).", n.Name, n.Slug), Data: n}, nil
	}
	body := fmt.Sprintf("%s proposes a new node: %s, %s.", c.node.Name, in.Name, in.Role)
	return s.cardAndWait(ctx, c, body, Card{Type: "node_proposal", Action: "node", NewNode: &nn})
}

// checkNewNode refuses at once what the card could never make: a taken handle or name, a
// template that does not exist, too many nodes.
func (s *Service) checkNewNode(ctx context.Context, nn NewNode) error {
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		if _, err := s.createTx(t, nn, ""); err != nil {
			return err
		}
		return errRollback
	})
	if errors.Is(err, errRollback) {
		return nil
	}
	return err
}

// errRollback undoes a transaction made only to check what it would do.
var errRollback = fmt.Errorf("rolled back")

func (s *Service) proposeCrew(ctx context.Context, c *turnCtx, in createGroupIn) (tools.Result, error) {
	var ids []string
	var missing []string
	for _, h := range in.Members {
		n, err := s.Node(ctx, h)
		if err != nil {
			missing = append(missing, "@"+strings.TrimPrefix(h, "@"))
			continue
		}
		ids = append(ids, n.ID)
	}
	if len(missing) > 0 {
		return tools.Result{}, fmt.Errorf("%s do not exist yet: propose each with node_create first, and make the crew once they exist.", strings.Join(missing, ", "))
	}
	nc := NewCrew{Title: in.Title, NodeIDs: ids}
	if in.Lead != "" {
		n, err := s.Node(ctx, in.Lead)
		if err != nil {
			return tools.Result{}, err
		}
		nc.LeadNodeID = n.ID
	}
	if c.node.Autonomy.CreateNodes == "auto" {
		r, err := s.CreateCrew(ctx, nc)
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Summary: fmt.Sprintf("Made the crew %s.", r.Title), Data: r}, nil
	}
	body := fmt.Sprintf("%s proposes a crew: %s, with %s.", c.node.Name, in.Title, strings.Join(in.Members, ", "))
	return s.cardAndWait(ctx, c, body, Card{Type: "node_proposal", Action: "crew", NewCrew: &nc})
}

func (s *Service) proposeCrewAdd(ctx context.Context, c *turnCtx, in crewAddIn) (tools.Result, error) {
	n, err := s.Node(ctx, in.Node)
	if err != nil {
		return tools.Result{}, err
	}
	var room Room
	if in.Crew == "" {
		if c.room.Kind != RoomCrew {
			return tools.Result{}, fmt.Errorf("Name the crew: this turn is not in one.")
		}
		room = c.room
	} else if room, err = s.findCrew(ctx, in.Crew); err != nil {
		return tools.Result{}, err
	}
	for _, m := range room.Members {
		if m.NodeID == n.ID {
			return tools.Result{}, fmt.Errorf("@%s is already in %s.", n.Slug, room.Title)
		}
	}
	body := fmt.Sprintf("%s asks to add @%s to %s: %s", c.node.Name, n.Slug, room.Title, in.Reason)
	return s.cardAndWait(ctx, c, body, Card{Type: "crew_add", RoomID: room.ID, Crew: room.Title, AddNode: n.ID, Handle: n.Slug, Reason: in.Reason})
}

// findCrew finds one of the owner's crews by id or title ("the SWE crew" finds “SWE”).
func (s *Service) findCrew(ctx context.Context, ref string) (Room, error) {
	rooms, err := s.Rooms(ctx)
	if err != nil {
		return Room{}, err
	}
	bare := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(ref)), "the "), " crew"))
	for _, r := range rooms {
		if r.Kind == RoomCrew && (r.ID == ref || strings.EqualFold(r.Title, ref) || strings.EqualFold(r.Title, bare)) {
			return r, nil
		}
	}
	return Room{}, fmt.Errorf("Your owner has no crew %q.", ref)
}

// cardAndWait posts a card in the turn's thread and waits for its answer (awaitCard).
func (s *Service) cardAndWait(ctx context.Context, c *turnCtx, body string, card Card) (tools.Result, error) {
	var m Message
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var err error
		m, err = s.postCardTx(tx, c.rt.turn, c.node, body, card)
		return err
	})
	if err != nil {
		return tools.Result{}, err
	}
	out, err := s.awaitCard(ctx, c, m)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Summary: out}, nil
}

package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Card is the data of an approval message (spec 002 §7, §8.6): what a node needs from its owner.
// It is settled once, by compare-and-set on its status, from whichever client answers first; its
// Needs me mirror settles with it.
type Card struct {
	Type   string `json:"type"`   // tools, node_proposal, crew_add, session
	Status string `json:"status"` // pending, applying, approved, discarded, expired
	NodeID string `json:"nodeId"`
	TurnID string `json:"turnId"`
	// Where the answer wakes the node.
	Lane    string `json:"lane"`
	Private bool   `json:"private"`
	ByOwner bool   `json:"byOwner"`
	Depth   int    `json:"depth"`
	// A held write's calls, applied through the assistant's Apply.
	ConversationID string     `json:"conversationId,omitempty"`
	Calls          []CardCall `json:"calls,omitempty"`
	// A proposed node or crew, or a node for a crew.
	Action  string   `json:"action,omitempty"` // node, crew
	NewNode *NewNode `json:"node,omitempty"`
	NewCrew *NewCrew `json:"crew,omitempty"`
	RoomID  string   `json:"roomId,omitempty"`
	Crew    string   `json:"crewTitle,omitempty"`
	AddNode string   `json:"addNodeId,omitempty"`
	Handle  string   `json:"handle,omitempty"`
	Reason  string   `json:"reason,omitempty"`

	// An agent session's start or message, held for the owner (autonomy.computerWork: ask).
	Session *SessionCall `json:"session,omitempty"`
	// A call on the owner's computer the decision order asks about (computercard.go), or a
	// command as the administrator (sudo.go).
	Computer *ComputerAsk `json:"computer,omitempty"`
	Sudo     *SudoAsk     `json:"sudo,omitempty"`
	Secret   *SecretAsk   `json:"secret,omitempty"` // a secret asked for (secretrequest.go)
	// A sign-in handed to the owner (logincard.go) and captures held for their preview
	// (heldcapture.go), their fields beside the card's own.
	*LoginAsk
	*PreviewAsk

	DecisionID string `json:"decisionId,omitempty"`
	// ExpiresAt is when a card of background work stops waiting (cardexpiry.go).
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	Result     string     `json:"result,omitempty"`
	Error      string     `json:"error,omitempty"`
	AnsweredAt *time.Time `json:"answeredAt,omitempty"`
	AnsweredBy string     `json:"answeredBy,omitempty"`
}

// CardCall is one held write on a card.
type CardCall struct {
	ProposalID string     `json:"proposalId"`
	Name       string     `json:"name"`
	Preview    string     `json:"preview"`
	Risk       tools.Risk `json:"risk,omitempty"`
}

// Card statuses.
const (
	CardPending   = "pending"
	CardApplying  = "applying"
	CardApproved  = "approved"
	CardDiscarded = "discarded"
	CardExpired   = "expired"
)

// Decisions on a card.
const (
	Approve = "approve"
	Discard = "discard"
)

// cardAnswer is what a waiting call hears.
type cardAnswer struct {
	approved bool
	result   string
}

// postCardTx posts a card in the turn's thread, owner only, and mirrors it on Needs me.
func (s *Service) postCardTx(tx *ledger.Tx, t Turn, n Node, body string, c Card) (Message, error) {
	c.Status, c.NodeID, c.TurnID = CardPending, n.ID, t.ID
	c.Lane, c.Private, c.ByOwner, c.Depth = t.Lane, t.Private, t.ByOwner, t.Depth
	if !isConvLane(t.Lane) && t.ReportTo != nil {
		// A delegated step's card sits where the step was asked for.
		c.Lane, c.Private = t.ReportTo.Lane, t.ReportTo.Private
	}
	room := roomOfLane(c.Lane, t.RoomID)
	c.ExpiresAt = cardExpiry(t.Lane, s.now())
	switch c.Type {
	case "sudo":
		at := s.now().Add(SudoCardLife)
		c.ExpiresAt = &at
	case CardLogin:
		at := s.now().Add(browser.HoldLimit)
		c.ExpiresAt = &at
	case CardMediaPreview:
		c.ExpiresAt = nil // it never keeps work waiting, so it does not expire with it
	}
	if s.cfg.Needs != nil && c.mirrored() {
		if err := mirrorTx(tx, n.Name, body, &c); err != nil {
			return Message{}, fmt.Errorf("node: put the card on Needs me: %w", err)
		}
	}
	data, _ := json.Marshal(c)
	m := Message{RoomID: room, Author: AuthorNode, NodeID: n.ID, Kind: KindApproval, Body: body, Data: data,
		Private: true, Depth: t.Depth + 1, TurnID: t.ID}
	m, err := s.insertMessageTx(tx, m)
	if err != nil {
		return Message{}, err
	}
	if c.DecisionID != "" {
		s.followNeeds(m.ID, c.DecisionID)
	}
	return m, nil
}

// mirrored reports whether the card waits on Needs me too: a secret is typed on its card only.
func (c Card) mirrored() bool { return c.Type != "secret" }

// mirrorTx puts the card on Needs me as a question with its options, by the node named.
func mirrorTx(tx *ledger.Tx, nodeName, body string, c *Card) error {
	d, err := needs.Post(tx, needs.NewQuestion(needs.Source{Title: nodeName}, body, c.options(), 0, false))
	if err != nil {
		return err
	}
	c.DecisionID = d.ID
	return nil
}

// roomOfLane is the room a conversation lane belongs to.
func roomOfLane(lane, def string) string {
	if rest, ok := strings.CutPrefix(lane, "conv:"); ok {
		if i := strings.LastIndex(rest, ":"); i > 0 {
			return rest[:i]
		}
	}
	return def
}

// heldCardTx puts a turn's held writes on one card.
func (s *Service) heldCardTx(tx *ledger.Tx, t Turn, n Node, conv string, held []assistant.ToolRow) error {
	c := Card{Type: "tools", ConversationID: conv}
	var previews []string
	for _, r := range held {
		c.Calls = append(c.Calls, CardCall{ProposalID: r.ProposalID, Name: r.Name, Preview: r.Preview, Risk: r.Risk})
		previews = append(previews, tools.Sentence(r.Preview))
	}
	body := fmt.Sprintf("%s asks to %s", n.Name, strings.Join(previews, " "))
	if len(held) > 1 {
		body = fmt.Sprintf("%s asks to make %d changes: %s", n.Name, len(held), strings.Join(previews, " "))
	}
	_, err := s.postCardTx(tx, t, n, body, c)
	return err
}

// Answer settles a card once: approve applies what it holds, discard drops it. A card already
// answered is a conflict; one whose work failed returns to pending with the error, to try again.
// by names the client (browser, cli, phone, needs).
func (s *Service) Answer(ctx context.Context, messageID, decision, by string) (Message, error) {
	if _, c, err := s.loginCard(ctx, messageID); err == nil {
		// A sign-in is answered on its own terms: approve is "I'm done", discard "Not now".
		action := map[string]string{Approve: LoginDone, DecideOnce: LoginDone, Discard: LoginDecline}[decision]
		if action == "" {
			return Message{}, problem.Invalid("A sign-in card takes approve (I'm done) or discard (Not now), not %q.", decision)
		}
		if c.Status != CardPending && c.Status != LoginWorking {
			return Message{}, problem.New(problem.KindConflict, "This sign-in has ended already.")
		}
		return s.AnswerLogin(ctx, messageID, action, by)
	}
	return s.settleCard(ctx, messageID, decision, by, nil)
}

// settleCard is Answer with the card's work given (nil: cardWork's).
func (s *Service) settleCard(ctx context.Context, messageID, decision, by string, work func(*Card) (string, error)) (Message, error) {
	if !slices.Contains([]string{Approve, Discard, DecideOnce, DecideMission, DecideAlways}, decision) {
		return Message{}, problem.Invalid("decision is approve or discard (once, mission or always for a computer card), not %q.", decision)
	}
	var m Message
	var c Card
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var err error
		if m, err = s.messageIn(tx.Context(), tx, messageID); err != nil {
			return err
		}
		if m.Kind != KindApproval {
			return problem.Invalid("That message is not a card.")
		}
		json.Unmarshal(m.Data, &c)
		if err := c.checkDecision(decision); err != nil {
			return err
		}
		res, err := tx.ExecContext(tx.Context(), `UPDATE node_messages SET data = json_set(data, '$.status', 'applying'), updated_at = ?
			WHERE id = ? AND json_extract(data, '$.status') = 'pending'`, store.Stamp(tx.Now()), messageID)
		if err != nil {
			return fmt.Errorf("node: settle a card: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.New(problem.KindConflict, cardSettled(c))
		}
		if c.DecisionID != "" && by != needs.ByChat {
			opt := c.optionOf(decision)
			// The mirror settles with the card; one that expired or was answered already is fine.
			if _, err := needs.Settle(tx, c.DecisionID, needs.Choose(opt), needs.ByChat); err != nil && !errors.Is(err, needs.ErrSettled) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Message{}, err
	}
	if work == nil {
		work = func(c *Card) (string, error) { return s.cardWork(context.WithoutCancel(ctx), c, decision) }
	}
	result, werr := work(&c)
	if errors.Is(werr, errSudoGaveUp) {
		decision, result, werr = Discard, fmt.Sprintf("sudo refused %d passwords, so nothing ran.", computer.SudoTries), nil
	}
	now := s.now()
	c.AnsweredAt, c.AnsweredBy = &now, by
	if werr != nil {
		c.Status, c.Error = CardPending, werr.Error()
	} else {
		c.Status, c.Result, c.Error = CardApproved, result, ""
		if decision == Discard {
			c.Status = CardDiscarded
		} else if c.Type == CardMediaPreview {
			c.Status = CardReleased
		}
	}
	owner, _ := s.Node(ctx, c.NodeID)
	err = s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(tx *ledger.Tx) error {
		if werr != nil && c.DecisionID != "" {
			// Its mirror was settled with the answer: the card waits on Needs me again too.
			if err := mirrorTx(tx, owner.Name, m.Body, &c); err != nil {
				return err
			}
		}
		m.Data, _ = json.Marshal(c)
		if err := s.updateMessageTx(tx, m); err != nil {
			return err
		}
		if werr != nil {
			return nil
		}
		return s.wakeForCardTx(tx, m, c)
	})
	if err != nil {
		return Message{}, err
	}
	s.wake()
	if werr != nil {
		if c.DecisionID != "" {
			s.followNeeds(m.ID, c.DecisionID)
		}
		return m, problem.New(problem.KindConflict, "It could not be applied, so the card waits again: "+werr.Error())
	}
	return m, nil
}

func cardSettled(c Card) string {
	switch c.Status {
	case CardApproved:
		return "This card was already approved."
	case CardDiscarded:
		return "This card was already discarded."
	case CardExpired:
		return "This card expired: its work ended, or it waited longer than its work could."
	}
	return "This card is being answered already."
}

// cardWork does what an answered card holds and says what came of it.
func (s *Service) cardWork(ctx context.Context, c *Card, decision string) (string, error) {
	if c.Type == CardMediaPreview {
		return s.previewCardWork(ctx, c, decision)
	}
	if decision == Discard {
		if c.Type == "tools" {
			for _, call := range c.Calls {
				if err := s.cfg.Assistant.Discard(ctx, call.ProposalID); err != nil && problem.KindOf(err) != problem.KindConflict {
					return "", err
				}
			}
		}
		return "Your owner discarded it.", nil
	}
	switch c.Type {
	case "tools":
		var ids []string
		for _, call := range c.Calls {
			ids = append(ids, call.ProposalID)
		}
		rows, err := s.cfg.Assistant.Apply(ctx, c.ConversationID, ids)
		if err != nil {
			return "", err
		}
		var done []string
		for _, r := range rows {
			line := r.Summary
			for _, ref := range r.Refs {
				line += fmt.Sprintf(" [%s](ensemble://%s/%s)", ref.Title, ref.Kind, ref.ID)
			}
			done = append(done, line)
		}
		return "Applied: " + strings.Join(done, " "), nil
	case "node_proposal":
		if c.Action == "crew" && c.NewCrew != nil {
			r, err := s.CreateCrew(ctx, *c.NewCrew)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Made the crew %s (%s).", r.Title, r.ID), nil
		}
		if c.NewNode == nil {
			return "", errors.New("the card names no node")
		}
		n, err := s.Create(ctx, *c.NewNode)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Made the node %s (@%s), with its own DM.", n.Name, n.Slug), nil
	case "session":
		return s.sessionCardWork(ctx, *c)
	case "computer":
		return s.computerCardWork(ctx, c, decision)
	case "sudo":
		return s.sudoCardWork(ctx, c, nil)
	case "secret":
		return "", problem.Invalid("A secret card is answered with the secret, typed on the card.")
	case "crew_add":
		r, err := s.AddToCrew(ctx, c.RoomID, c.AddNode)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Added @%s to %s.", c.Handle, r.Title), nil
	}
	return "", fmt.Errorf("a card of type %q cannot be answered here", c.Type)
}

// wakeForCardTx hands a card's answer to the call waiting on it, or wakes the node with it in a
// new turn (operation card:<id>, so it is woken once).
func (s *Service) wakeForCardTx(tx *ledger.Tx, m Message, c Card) error {
	s.mu.Lock()
	w := s.waits[m.ID]
	delete(s.waits, m.ID)
	s.mu.Unlock()
	if w != nil {
		w <- cardAnswer{approved: c.Status == CardApproved, result: c.Result}
		return nil
	}
	verb := "approved"
	if c.Status == CardDiscarded {
		verb = "discarded"
	}
	note := fmt.Sprintf("Your owner %s your card “%s”. %s Carry on from there; if nothing more needs doing, reply with the result in a line.", verb, m.Body, c.Result)
	return s.enqueueTx(tx, Turn{NodeID: c.NodeID, RoomID: roomOfLane(c.Lane, m.RoomID), Lane: c.Lane, Private: c.Private,
		Reason: ReasonApproval, ByOwner: c.ByOwner, Depth: c.Depth, OperationID: "card:" + m.ID, Note: note, OriginID: c.TurnID})
}

// awaitCard waits, inside a tool call, for the owner's answer to card m: at most CardWait, with
// the node shown waiting. No answer in time parks the turn: it ends posting nothing, and the
// answer wakes the node later.
func (s *Service) awaitCard(ctx context.Context, c *turnCtx, m Message) (string, error) {
	ch := make(chan cardAnswer, 1)
	s.mu.Lock()
	s.waits[m.ID] = ch
	s.mu.Unlock()
	t := c.rt.turn
	s.live(KindStatus, t.RoomID, Status{RoomID: t.RoomID, NodeID: c.node.ID, State: "waiting", CardID: m.ID, Private: t.Private, TurnID: t.ID})
	defer s.live(KindStatus, t.RoomID, Status{RoomID: t.RoomID, NodeID: c.node.ID, State: "thinking", Private: t.Private, TurnID: t.ID})
	timer := time.NewTimer(s.cfg.CardWait)
	defer timer.Stop()
	select {
	case a := <-ch:
		if a.approved {
			return "Your owner approved it. " + a.result, nil
		}
		return "Your owner discarded it; do not do it another way.", nil
	case <-timer.C:
	case <-ctx.Done():
	}
	s.mu.Lock()
	if s.waits[m.ID] == ch {
		delete(s.waits, m.ID)
	}
	s.mu.Unlock()
	select {
	case a := <-ch: // answered just as the wait ended
		if a.approved {
			return "Your owner approved it. " + a.result, nil
		}
		return "Your owner discarded it; do not do it another way.", nil
	default:
	}
	c.rt.parked.Store(true)
	return "Your owner has not answered the card yet. Stop here and say nothing about it: you will be woken with their answer.", nil
}

// followNeeds settles the card when its Needs me mirror is answered there.
func (s *Service) followNeeds(messageID, decisionID string) {
	if s.cfg.Needs == nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		d, err := s.cfg.Needs.Wait(s.life, decisionID)
		if err != nil || d.Status != needs.Answered || d.AnsweredBy == needs.ByChat || d.Answer == nil {
			return
		}
		m, err := s.messageIn(s.life, s.cfg.Store.Reader(), messageID)
		if err != nil {
			return
		}
		var c Card
		json.Unmarshal(m.Data, &c)
		decision := c.decisionOf(d.Answer.Option)
		if _, err := s.Answer(context.WithoutCancel(s.life), messageID, decision, needs.ByChat); err != nil {
			s.log.Info("node: answer a card from Needs me", "card", messageID, "err", err)
		}
	}()
}

// remirrorCards puts every pending card on Needs me again after a restart (a restart expires the
// old decisions).
func (s *Service) remirrorCards(ctx context.Context) error {
	if s.cfg.Needs == nil {
		return nil
	}
	cards, err := s.queryMessages(ctx, s.cfg.Store.Reader(), "WHERE kind = 'approval' AND json_extract(data, '$.status') = 'pending'")
	if err != nil {
		return err
	}
	for _, m := range cards {
		var c Card
		json.Unmarshal(m.Data, &c)
		if !c.mirrored() {
			continue
		}
		if c.DecisionID != "" {
			if d, err := s.cfg.Needs.Get(ctx, c.DecisionID); err == nil && d.Status == needs.Open {
				s.followNeeds(m.ID, c.DecisionID)
				continue
			}
		}
		n, _ := s.Node(ctx, c.NodeID)
		err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
			if err := mirrorTx(tx, n.Name, m.Body, &c); err != nil {
				return err
			}
			m.Data, _ = json.Marshal(c)
			return s.updateMessageTx(tx, m)
		})
		if err != nil {
			return err
		}
		s.followNeeds(m.ID, c.DecisionID)
	}
	return nil
}

// PendingCards lists the cards waiting for the owner, oldest first.
func (s *Service) PendingCards(ctx context.Context) ([]Message, error) {
	return s.queryMessages(ctx, s.cfg.Store.Reader(), "WHERE kind = 'approval' AND json_extract(data, '$.status') = 'pending' ORDER BY created_at")
}

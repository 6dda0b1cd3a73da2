package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Held captures (spec 002 §8.14, §8.16): a screenshot that shows a saved secret's value or
// something shaped like a key, or of a site the owner previews first, is kept on the computer
// but shown in no chat and given to no model. One owner-only media_preview card per work holds
// them until the owner releases (the files become ordinary and the node is woken to show them)
// or discards them (deleted).

// PreviewAsk is a media_preview card's data beside the card's own (data.type "media_preview").
type PreviewAsk struct {
	Evidence []computer.Shared `json:"evidence"`
	Reasons  []string          `json:"reasons"`
	// Answers are the owner's per file answers: released or discarded.
	Answers map[string]string `json:"answers,omitempty"`
	// Operation is the work the files were captured for (node:<id>:own).
	Operation string `json:"operation"`
}

// Card type and statuses of a held capture.
const (
	CardMediaPreview = "media_preview"
	CardReleased     = "released"
)

// holdReasons are why a capture is held for the owner's preview, or none.
func (s *Service) holdReasons(ctx context.Context, text, site string) []string {
	var out []string
	if s.hide(text) != text {
		out = append(out, "it shows one of your owner's saved secrets")
	}
	if secrets.KeyShaped(text) {
		out = append(out, "it shows something shaped like a key or token")
	}
	if site != "" && s.SiteRule(ctx, site) == SitePreview {
		out = append(out, "your owner sees captures of "+site+" first")
	}
	return out
}

// neverCaptured is a capture of a site the owner marked never captured: the picture is dropped
// unseen and unkept.
type neverCaptured string

func (n neverCaptured) Error() string {
	return fmt.Sprintf("Your owner never has %s captured, so no picture of it was kept; read the page's text instead (browser_snapshot).", string(n))
}

// keptShot is a screenshot kept as the node's evidence: shown with its reply, or held.
type keptShot struct {
	Evidence string   `json:"evidence"`
	Name     string   `json:"name"`
	Width    int      `json:"width,omitempty"`
	Height   int      `json:"height,omitempty"`
	Held     bool     `json:"held,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
	Masked   int      `json:"masked,omitempty"`
}

func (k keptShot) summary() string {
	if k.Held {
		return fmt.Sprintf("The screenshot %s is held for your owner's preview (%s): it is not shown in the chat and you do not see it or its text; your owner releases or discards it on the card.",
			k.Evidence, strings.Join(k.Reasons, "; "))
	}
	out := fmt.Sprintf("This screenshot (%s, %d×%d) will appear with your reply; it is kept as evidence %s.", k.Name, k.Width, k.Height, k.Evidence)
	if k.Masked > 0 {
		out += fmt.Sprintf(" %d password fields were blanked.", k.Masked)
	}
	return out
}

// keepShot keeps a screenshot as the node's evidence and shows it in the turn's conversation,
// or holds it on the owner's media_preview card.
func (s *Service) keepShot(ctx context.Context, c *turnCtx, shot browser.Shot, caption string) (keptShot, error) {
	if s.cfg.Computer == nil {
		return keptShot{}, errNoComputer
	}
	if len(shot.Image) == 0 {
		return keptShot{}, fmt.Errorf("The browser gave back no picture of %s, so there is nothing to show.", siteOf(shot.URL))
	}
	if site := siteOf(shot.URL); s.SiteRule(ctx, site) == SiteNever {
		return keptShot{}, neverCaptured(site)
	}
	ext := ".png"
	if shot.Mime == "image/jpeg" {
		ext = ".jpg"
	}
	name := "screenshot-" + s.now().Format("20060102-150405") + ext
	sh, err := s.cfg.Computer.Keep(name, bytes.NewReader(shot.Image))
	if err != nil {
		return keptShot{}, err
	}
	k := keptShot{Evidence: sh.ID, Name: sh.Name, Width: shot.Width, Height: shot.Height, Masked: shot.Masked}
	if k.Reasons = s.holdReasons(ctx, shot.Text, siteOf(shot.URL)); len(k.Reasons) > 0 {
		k.Held = true
		return k, s.holdFile(ctx, c, sh, k.Reasons)
	}
	if err := s.keepShotText(c.node, sh.ID, shot.Text); err != nil {
		s.log.Warn("node: keep a capture's page text", "evidence", sh.ID, "err", err)
	}
	return k, s.showFiles(ctx, c.rt.turn, c.node, []computer.Shared{sh}, caption)
}

// showFiles posts files as the node's file message in the turn's conversation, beside its reply.
func (s *Service) showFiles(ctx context.Context, t Turn, n Node, files []computer.Shared, caption string) error {
	data, _ := json.Marshal(FileData{Type: "file", Files: files})
	return s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		_, err := s.insertMessageTx(tx, Message{RoomID: roomOfLane(t.Lane, t.RoomID), Author: AuthorNode, NodeID: n.ID, Kind: KindText,
			Body: strings.TrimSpace(caption), Data: data, Private: true, Depth: t.Depth + 1, TurnID: t.ID})
		return err
	})
}

// holdFile puts a held file on the work's pending media_preview card, or a new one.
func (s *Service) holdFile(ctx context.Context, c *turnCtx, sh computer.Shared, reasons []string) error {
	work := string(nodeWork(c.node.ID))
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		cards, err := s.queryMessages(tx.Context(), tx, `WHERE kind = 'approval' AND json_extract(data, '$.type') = 'media_preview'
			AND json_extract(data, '$.status') = 'pending' AND author_node_id = ? AND json_extract(data, '$.operation') = ? ORDER BY seq DESC LIMIT 1`, c.node.ID, work)
		if err != nil {
			return err
		}
		if len(cards) == 1 {
			m := cards[0]
			var card Card
			json.Unmarshal(m.Data, &card)
			if card.PreviewAsk == nil {
				card.PreviewAsk = &PreviewAsk{Operation: work}
			}
			card.Evidence = append(card.Evidence, sh)
			for _, r := range reasons {
				if !slices.Contains(card.Reasons, r) {
					card.Reasons = append(card.Reasons, r)
				}
			}
			m.Body = previewBody(c.node, len(card.Evidence))
			m.Data, _ = json.Marshal(card)
			return s.updateMessageTx(tx, m)
		}
		card := Card{Type: CardMediaPreview, PreviewAsk: &PreviewAsk{Evidence: []computer.Shared{sh}, Reasons: reasons, Operation: work}}
		_, err = s.postCardTx(tx, c.rt.turn, c.node, previewBody(c.node, 1), card)
		return err
	})
	if err != nil {
		return fmt.Errorf("node: hold a capture for the owner: %w", err)
	}
	return nil
}

func previewBody(n Node, files int) string {
	if files == 1 {
		return fmt.Sprintf("@%s held a screenshot for you to see first.", n.Slug)
	}
	return fmt.Sprintf("@%s held %d screenshots for you to see first.", n.Slug, files)
}

// previewCardWork releases a media_preview card's files (shown in its conversation as the node's
// file message) or deletes them.
func (s *Service) previewCardWork(ctx context.Context, c *Card, decision string) (string, error) {
	if c.PreviewAsk == nil || len(c.Evidence) == 0 {
		return "", fmt.Errorf("the card holds no files")
	}
	if c.Answers == nil {
		c.Answers = map[string]string{}
	}
	var open []computer.Shared // the files no answer of their own settled yet
	for _, f := range c.Evidence {
		if c.Answers[f.ID] == "" {
			open = append(open, f)
		}
	}
	if decision == Discard {
		for _, f := range open {
			if err := s.cfg.Computer.DropShared(f.ID); err != nil {
				return "", err
			}
			c.Answers[f.ID] = CardDiscarded
		}
		return "Your owner discarded the held screenshots; they are deleted. Do not take them again another way.", nil
	}
	n, err := s.Node(ctx, c.NodeID)
	if err != nil {
		return "", err
	}
	t := Turn{NodeID: c.NodeID, Lane: c.Lane, RoomID: roomOfLane(c.Lane, n.DMRoomID), Private: c.Private, Depth: c.Depth, ID: c.TurnID}
	if len(open) > 0 {
		if err := s.showFiles(ctx, t, n, open, "Released by your owner"); err != nil {
			return "", err
		}
	}
	for _, f := range open {
		c.Answers[f.ID] = CardReleased
	}
	return "The held screenshots are released and shown in the chat now; say in a line what they show.", nil
}

// heldFile reports whether a media_preview card holds the file id, for the files route.
func heldFile(c Card, id string) (computer.Shared, bool) {
	if c.Type != CardMediaPreview || c.PreviewAsk == nil || c.Status == CardDiscarded {
		return computer.Shared{}, false
	}
	i := slices.IndexFunc(c.Evidence, func(f computer.Shared) bool { return f.ID == id })
	if i < 0 {
		return computer.Shared{}, false
	}
	return c.Evidence[i], true
}

// The owner's rules for capturing a site (spec 002 §8.16), for every node and run: the runs'
// own, since runs read them through jobs.Options.SiteRule.
const (
	SitePreview = jobs.SitePreview // a capture of it waits for the owner on a card, shown to no model
	SiteNever   = jobs.SiteNever   // it is not captured at all
)

// PreviewSites are the sites whose captures the owner sees first, sorted.
func (s *Service) PreviewSites(ctx context.Context) ([]string, error) {
	return s.CaptureSites(ctx, SitePreview)
}

// CaptureSites are the sites with rule (SitePreview or SiteNever), sorted.
func (s *Service) CaptureSites(ctx context.Context, rule string) ([]string, error) {
	return queryAll(ctx, s.cfg.Store.Reader(), "read the capture sites", "SELECT site FROM browser_capture_sites WHERE rule = ? ORDER BY site", []any{rule},
		func(sc scanner) (string, error) {
			var site string
			return site, sc.Scan(&site)
		})
}

// SiteRule is the owner's rule for capturing site (a host; a rule for a site covers its
// subdomains): SiteNever, SitePreview or "". Never wins over preview.
func (s *Service) SiteRule(ctx context.Context, site string) string {
	site = strings.ToLower(site)
	if site == "" {
		return ""
	}
	for _, r := range []string{SiteNever, SitePreview} {
		sites, err := s.CaptureSites(ctx, r)
		if err == nil && slices.ContainsFunc(sites, func(p string) bool { return site == p || strings.HasSuffix(site, "."+p) }) {
			return r
		}
	}
	return ""
}

// SetPreviewSites replaces the sites whose captures the owner sees first.
func (s *Service) SetPreviewSites(ctx context.Context, sites []string) ([]string, error) {
	return s.SetCaptureSites(ctx, SitePreview, sites)
}

// SetCaptureSites replaces the sites with rule (hosts, such as bank.example.com, or addresses,
// whose host is taken; a site covers its subdomains). A site given one rule leaves the other.
func (s *Service) SetCaptureSites(ctx context.Context, rule string, sites []string) ([]string, error) {
	if rule != SitePreview && rule != SiteNever {
		return nil, problem.Invalid("A site's capture rule is preview or never, not %q.", rule)
	}
	var clean []string
	for _, site := range sites {
		site = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(site)), ".")
		if h := siteOf(site); strings.Contains(site, "://") && h != "" {
			site = h
		}
		if site == "" || slices.Contains(clean, site) {
			continue
		}
		if len(site) > 253 || strings.ContainsAny(site, " /\\\t") {
			return nil, problem.Invalid("%q is not a site: give its host, such as bank.example.com.", site)
		}
		clean = append(clean, site)
	}
	if len(clean) > 200 {
		return nil, problem.Invalid("At most 200 sites take one rule.")
	}
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		if _, err := tx.ExecContext(tx.Context(), "DELETE FROM browser_capture_sites WHERE rule = ?", rule); err != nil {
			return err
		}
		for _, site := range clean {
			if _, err := tx.ExecContext(tx.Context(), `INSERT INTO browser_capture_sites (site, rule, created_at) VALUES (?, ?, ?)
				ON CONFLICT (site) DO UPDATE SET rule = excluded.rule, created_at = excluded.created_at`, site, rule, store.Stamp(tx.Now())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("node: keep the capture sites: %w", err)
	}
	slices.Sort(clean)
	return clean, nil
}

// AnswerHeldFile answers one held file (spec 002 §8.16, one file at a time): released, it is
// shown in the card's conversation at once; discarded, it is deleted. The answer is kept on its
// card (answers), and once none of the card's files is held any more the card settles with all
// of them, waking the node when any was released.
func (s *Service) AnswerHeldFile(ctx context.Context, fileID, decision, by string) (Message, error) {
	answer := map[string]string{Approve: CardReleased, Discard: CardDiscarded}[decision]
	if answer == "" {
		return Message{}, problem.Invalid("A held file is released (approve) or discarded (discard), not %q.", decision)
	}
	m, c, err := s.claimHeldFile(ctx, fileID, answer)
	if err != nil {
		return Message{}, err
	}
	f, _ := heldFile(c, fileID)
	if werr := s.heldFileWork(ctx, c, f, answer); werr != nil {
		s.unclaimHeldFile(context.WithoutCancel(ctx), m.ID, fileID)
		return Message{}, problem.New(problem.KindConflict, "It could not be done, so the file is still held: "+werr.Error())
	}
	released, discarded := 0, 0
	for _, a := range c.Answers {
		switch a {
		case CardReleased:
			released++
		case CardDiscarded:
			discarded++
		}
	}
	if released+discarded < len(c.Evidence) {
		return s.Message(ctx, m.ID)
	}
	final := Discard
	result := "Your owner discarded the held screenshots; they are deleted. Do not take them again another way."
	if released > 0 {
		final = Approve
		result = fmt.Sprintf("Your owner released %d of the held screenshots (and discarded %d); the released ones are shown in the chat now: say in a line what they show.", released, discarded)
	}
	return s.settleCard(ctx, m.ID, final, by, func(*Card) (string, error) { return result, nil })
}

// claimHeldFile keeps one file's answer on its pending card, so that no other answer takes it.
func (s *Service) claimHeldFile(ctx context.Context, fileID, answer string) (Message, Card, error) {
	var m Message
	var c Card
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		ms, err := s.queryMessages(tx.Context(), tx, `WHERE kind = 'approval' AND json_extract(data, '$.type') = 'media_preview'
			AND json_extract(data, '$.status') = 'pending'
			AND EXISTS (SELECT 1 FROM json_each(data, '$.evidence') WHERE json_extract(value, '$.id') = ?) LIMIT 1`, fileID)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return problem.NotFound("No card holds the file %s any more: it was released or discarded.", fileID)
		}
		m = ms[0]
		json.Unmarshal(m.Data, &c)
		if c.PreviewAsk == nil {
			return problem.NotFound("No card holds the file %s any more.", fileID)
		}
		if c.Answers[fileID] != "" {
			return problem.Conflict("That file was %s already.", c.Answers[fileID])
		}
		if c.Answers == nil {
			c.Answers = map[string]string{}
		}
		c.Answers[fileID] = answer
		m.Data, _ = json.Marshal(c)
		return s.updateMessageTx(tx, m)
	})
	return m, c, err
}

// unclaimHeldFile takes back a file's answer whose work failed.
func (s *Service) unclaimHeldFile(ctx context.Context, messageID, fileID string) {
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		m, err := s.messageIn(tx.Context(), tx, messageID)
		if err != nil {
			return err
		}
		var c Card
		json.Unmarshal(m.Data, &c)
		delete(c.Answers, fileID)
		m.Data, _ = json.Marshal(c)
		return s.updateMessageTx(tx, m)
	})
	if err != nil {
		s.log.Warn("node: take back a held file's answer", "file", fileID, "err", err)
	}
}

// heldFileWork shows one released file in the card's conversation, or deletes a discarded one.
func (s *Service) heldFileWork(ctx context.Context, c Card, f computer.Shared, answer string) error {
	if answer == CardDiscarded {
		return s.cfg.Computer.DropShared(f.ID)
	}
	n, err := s.Node(ctx, c.NodeID)
	if err != nil {
		return err
	}
	t := Turn{NodeID: c.NodeID, Lane: c.Lane, RoomID: roomOfLane(c.Lane, n.DMRoomID), Private: c.Private, Depth: c.Depth, ID: c.TurnID}
	return s.showFiles(ctx, t, n, []computer.Shared{f}, "Released by your owner")
}

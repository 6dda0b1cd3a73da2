package assistant

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/playbooks"
	"github.com/ensemblework/ensemble/runtime/skills"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// turnPrep is what a turn works from besides its history (spec 000 §3): the instructions' lasting
// part (the playbooks, the person's skills), the message's <context> block with the preloaded
// playbooks as guides, the tool schemas shown, and the records the turn knows (§4.1).
type turnPrep struct {
	// instructions follow the fixed instructions in the system message; they change only when the
	// person's skills do, so the provider's prompt cache keeps them.
	instructions string
	// context goes in front of the person's message in this request only; the saved conversation
	// keeps their text alone.
	context string
	shown   []string
	allows  func(*tools.Tool) bool // the settings' allowed write areas
	loaded  []*playbooks.Playbook
	all     bool
	refs    *refSet
	message string
	agent   *Agent // who answers in the assistant's place; nil for the assistant
}

// maxPathLen bounds the open path a turn request names.
const maxPathLen = 300

// prepare reads what a turn needs besides its history. Nothing it reads failing stops the turn: a
// missing part is logged and left out.
func (s *Service) prepare(ctx context.Context, convID string, req TurnRequest) *turnPrep {
	p := &turnPrep{refs: newRefSet(), message: req.Text, all: toolsetsOff(), agent: req.Agent}
	// The records the conversation knows: earlier calls' refs and titled links in earlier messages.
	if msgs, err := readMessages(ctx, s.cfg.Store.Reader(), convID, historyWindow); err != nil {
		s.cfg.Log.Warn("assistant: read earlier refs", "conversation", convID, "err", err)
	} else {
		for _, m := range msgs {
			for _, t := range m.Tools {
				p.refs.add(t.Refs...)
			}
			p.refs.add(linkedRefs(m.Text)...)
		}
	}
	// Records the message links, by their current titles.
	var kinds []string
	for _, m := range handleRe.FindAllStringSubmatch(req.Text, -1) {
		kind, id := m[1], m[2]
		kinds = append(kinds, kind)
		if s.cfg.Records == nil {
			continue
		}
		if title, err := s.cfg.Records.Title(ctx, kind, id); err == nil {
			p.refs.add(tools.Ref{Kind: kind, ID: id, Title: title})
		}
	}
	path := req.Path
	if len(path) > maxPathLen {
		path = ""
	}
	if !p.all {
		p.loaded = routePlaybooks(builtinPlaybooks, routeInput{Text: req.Text, Mentions: kinds, Path: path})
	}
	st, err := s.Settings(ctx)
	if err != nil {
		s.cfg.Log.Warn("assistant: read settings", "err", err)
	}
	p.allows = st.allows
	p.shown = p.allowed(shownTools(s.cfg.Tools, p.loaded, builtinPlaybooks, p.all), s.cfg.Tools)
	p.context = turnContext(s.cfg.Now(), p.loaded)

	var parts []string
	if s.cfg.Tools.Get("hub_how_to") != nil {
		parts = append(parts, playbookIndex(builtinPlaybooks))
	}
	if sks, err := s.skills(ctx, skills.MaxNamed); err != nil {
		s.cfg.Log.Warn("assistant: list skills", "err", err)
	} else if b := skillsBlock(sks); b != "" && s.cfg.Tools.Get("hub_read_skill") != nil {
		parts = append(parts, b)
	}
	if len(parts) > 0 {
		p.instructions = "\n\n" + strings.Join(parts, "\n\n")
	}
	return p
}

// linkedRefs are the records a text links with a title: [Title](ensemble://kind/id).
func linkedRefs(text string) []tools.Ref {
	var out []tools.Ref
	for _, m := range titledLinkRe.FindAllStringSubmatch(text, -1) {
		out = append(out, tools.Ref{Kind: m[2], ID: m[3], Title: strings.TrimPrefix(m[1], "@")})
	}
	return out
}

// known is a copy of the records the turn knows now, for the "refs" event.
func (p *turnPrep) known() []tools.Ref { return slices.Clone(p.refs.list) }

// tools are the schemas a request carries.
func (p *turnPrep) tools(reg *tools.Registry) []models.Tool { return reg.Describe(p.shown) }

// called notes one finished call: its refs become known, and a playbook hub_how_to loaded adds its
// tools for the rest of the turn.
func (p *turnPrep) called(reg *tools.Registry, row ToolRow, c models.ToolCall, isErr bool) {
	p.refs.add(row.Refs...)
	if pb := loadedBy(c.Name, c.Input, isErr); pb != nil && !p.all {
		for _, l := range p.loaded {
			if l == pb {
				return
			}
		}
		p.loaded = append(p.loaded, pb)
		p.shown = p.allowed(shownTools(reg, p.loaded, builtinPlaybooks, false), reg)
	}
}

// allowed is names without the writes of areas the person turned off and the tools the turn's
// agent does without: the model is not shown them. An agent's own tools are always shown.
func (p *turnPrep) allowed(names []string, reg *tools.Registry) []string {
	names = slices.DeleteFunc(names, func(n string) bool { t := reg.Get(n); return !p.allows(t) || !p.agent.offers(t) })
	if p.agent != nil {
		for _, n := range p.agent.Tools {
			if reg.Get(n) != nil && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// reply is the final text with known records named by title (§4.1).
func (p *turnPrep) reply(text string) string { return titled(text, p.refs, p.message) }

// turnContext is the block in front of the person's message: today with its weekday, week and time
// zone, then the preloaded playbooks as guides.
func turnContext(now time.Time, guides []*playbooks.Playbook) string {
	zone, off := now.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	tz := fmt.Sprintf("UTC%s%02d:%02d", sign, off/3600, off%3600/60)
	if name := now.Location().String(); name != "Local" && name != "" && name != "UTC" {
		tz = name + ", " + tz
	} else if zone != "" && zone != "UTC" {
		tz += " (" + zone + ")"
	}
	_, week := now.ISOWeek()
	var b strings.Builder
	fmt.Fprintf(&b, "<context>\nToday is %s (week %d), %s, time zone %s.", now.Format("Monday 2 January 2006"), week, now.Format("15:04"), tz)
	for _, g := range guides {
		b.WriteString("\n" + guide(g))
	}
	b.WriteString("\n</context>\n\n")
	return b.String()
}

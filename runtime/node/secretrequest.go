package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ToolSecretRequest is node_secret_request (spec 002 §8.7.1): a secret card its owner types the
// value into, in the window or on the phone. The page seals it for this computer's key and it is
// kept on this computer; the node hears only that it was saved, never the value.
const ToolSecretRequest = "node_secret_request"

func init() { actingTools[ToolSecretRequest] = true; ownerOnly[ToolSecretRequest] = true }

// SecretAsk is a secret card's question (data.type "secret").
type SecretAsk struct {
	Name  string   `json:"name"`
	Why   string   `json:"why"`
	Allow []string `json:"allow,omitempty"` // the node's suggestion of where it may be sent
	// Saved says it was saved, and sealed that it came sealed (always, here).
	Saved bool `json:"saved,omitempty"`
}

type secretRequestIn struct {
	Name  string   `json:"name" jsonschema:"the secret's name, as an environment variable (STRIPE_API_KEY)" check:"minLength=1,maxLength=100"`
	Why   string   `json:"why" jsonschema:"what it is for, in a sentence for your owner" check:"minLength=1,maxLength=500"`
	Allow []string `json:"allow,omitempty" jsonschema:"where it may be sent (https://api.stripe.com), for your owner to keep or change" check:"maxItems=10,items.maxLength=200"`
}

func secretRequestTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolSecretRequest, "Ask your owner for a secret (an API key, a token) on a card they type it into; it is kept on their computer and you never see it. Use it afterwards with secret_http as {{NAME}}."),
		tools.Typed[secretRequestIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in secretRequestIn) (tools.Result, error) {
			c, err := ownerTurn(tc, "A secret is asked for only in a turn your owner started.")
			if err != nil {
				return tools.Result{}, err
			}
			name := strings.TrimSpace(in.Name)
			if p := secrets.NameProblem(secrets.Run, name); p != "" {
				return tools.Result{}, errors.New(p)
			}
			body := fmt.Sprintf("%s asks for the secret %s: %s", c.node.Name, name, strings.TrimSpace(in.Why))
			return c.s.cardAndWait(ctx, c, body, Card{Type: "secret", Secret: &SecretAsk{Name: name, Why: strings.TrimSpace(in.Why), Allow: in.Allow}})
		}})
}

// SecretCard is a secret card's question, for the page that seals the value.
func (s *Service) SecretCard(ctx context.Context, messageID string) (Message, Card, error) {
	return s.cardOfType(ctx, messageID, "secret")
}

// AnswerSecret settles a secret card once: save keeps the value (opened from its box by the caller)
// under the card's name with the origins the owner chose; the node hears the name only.
func (s *Service) AnswerSecret(ctx context.Context, messageID, by string, allow []string, save func(name string, allow []string) error) (Message, error) {
	return s.settleCard(ctx, messageID, Approve, by, func(c *Card) (string, error) {
		if c.Type != "secret" || c.Secret == nil {
			return "", problem.Invalid("That card is not a secret card.")
		}
		if err := save(c.Secret.Name, allow); err != nil {
			return "", err
		}
		c.Secret.Allow, c.Secret.Saved = allow, true
		where := "any address"
		if len(allow) > 0 {
			where = strings.Join(allow, ", ")
		}
		return fmt.Sprintf("Your owner saved %s on their computer, for %s. Use it with secret_http as {{%s}}; you never see its value.", c.Secret.Name, where, c.Secret.Name), nil
	})
}

// savedSecretsIn are the names its owner saved through the secret cards of a room: what a node's
// run there carries (spec 002 §8.7.5), a node's run getting no other secret.
func (s *Service) savedSecretsIn(ctx context.Context, roomID string) []string {
	names, _ := queryAll(ctx, s.cfg.Store.Reader(), "read the room's saved secrets",
		`SELECT DISTINCT json_extract(data, '$.secret.name') FROM node_messages WHERE room_id = ? AND kind = 'approval'
			AND json_extract(data, '$.type') = 'secret' AND json_extract(data, '$.secret.saved') = 1`, []any{roomID},
		func(sc scanner) (string, error) {
			var n string
			return n, sc.Scan(&n)
		})
	return names
}

// withSavedSecrets adds to a node's run the secrets saved through its room's secret cards.
func (s *Service) withSavedSecrets(ctx context.Context, req *jobs.AssignRequest, roomID string) {
	saved := s.savedSecretsIn(ctx, roomID)
	if len(saved) == 0 {
		return
	}
	var names []string
	if req.Settings.Secrets != nil {
		names = slices.Clone(*req.Settings.Secrets)
	}
	for _, n := range saved {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	req.Settings.Secrets = &names
}

package node

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"

	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ToolSecretHTTP is secret_http for a node (spec 002 §8.7.5): a request on its owner's computer
// with one of their saved secrets, only to that secret's allowed destinations, only in a turn its
// owner started. The node never sees the value.
const ToolSecretHTTP = "secret_http"

func init() { actingTools[ToolSecretHTTP] = true; ownerOnly[ToolSecretHTTP] = true }

// secretWordsRe finds a turn that may need a request with a secret.
var secretWordsRe = regexp.MustCompile(`(?i)\b(secrets?|tokens?|api|keys?|endpoint|webhook|https?://)`)

func secretHTTPTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolSecretHTTP, "Make an HTTPS request with one of your owner's saved secrets put in where {{NAME}} appears in a header or the body, "+
		"only to that secret's allowed origins. You never see the value: it is hidden in the answer. No redirects are followed."),
		tools.Typed[secrets.HTTPRequest]{Run: func(ctx context.Context, tc *tools.ToolContext, in secrets.HTTPRequest) (tools.Result, error) {
			c, err := ownerTurn(tc, "A secret is used only in a turn your owner started.")
			if err != nil {
				return tools.Result{}, err
			}
			if c.s.cfg.SecretHTTP == nil {
				return tools.Result{}, errors.New("Saved secrets cannot be used here.")
			}
			a, err := c.s.cfg.SecretHTTP(ctx, in, "@"+c.node.Slug)
			if err != nil {
				return tools.Result{}, err
			}
			raw, _ := json.Marshal(a)
			return tools.Result{Summary: string(raw), Data: a}, nil
		}})
}

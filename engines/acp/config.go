package acp

import (
	"context"
	"errors"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ensemblework/ensemble/engines"
)

// configure sets the session the way the run asks: the mode that asks before edits and commands,
// the options that would approve calls without asking turned off, then the model and thinking
// level from the session's own options (an older agent's models and session/set_model). It
// returns the model the agent reports (an older agent's: the one it accepted) and its thinking
// level ("": the agent has no such option).
func (s *serve) configure(opts []acpsdk.SessionConfigOption, models *acpsdk.SessionModelState, modes *acpsdk.SessionModeState) (model, effort string, err error) {
	p := s.p
	sid := acpsdk.SessionId(s.res.SessionID)
	setValue := func(id acpsdk.SessionConfigId, v acpsdk.SessionConfigValueId) error {
		resp, err := call(s, func(ctx context.Context) (acpsdk.SetSessionConfigOptionResponse, error) {
			return s.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: id, Value: v}})
		})
		if err == nil && len(resp.ConfigOptions) > 0 {
			opts = resp.ConfigOptions
		}
		return err
	}
	for _, o := range opts {
		switch {
		case o.Boolean != nil && containsID(p.ConfigOff, string(o.Boolean.Id)) && o.Boolean.CurrentValue:
			_, err := call(s, func(ctx context.Context) (acpsdk.SetSessionConfigOptionResponse, error) {
				return s.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{Boolean: &acpsdk.SetSessionConfigOptionBoolean{SessionId: sid, ConfigId: o.Boolean.Id, Type: "boolean", Value: false}})
			})
			if err != nil {
				return "", "", s.notAsking(err)
			}
		case o.Select != nil && containsID(p.ConfigOff, string(o.Select.Id)) && o.Select.CurrentValue != "off":
			if err := setValue(o.Select.Id, "off"); err != nil {
				return "", "", s.notAsking(err)
			}
		}
	}
	if p.Mode != "" {
		if sel := category(opts, acpsdk.SessionConfigOptionCategoryMode); sel != nil && string(sel.CurrentValue) != p.Mode && hasValue(sel, p.Mode) {
			if err := setValue(sel.Id, acpsdk.SessionConfigValueId(p.Mode)); err != nil {
				return "", "", s.notAsking(err)
			}
		} else if modes != nil && string(modes.CurrentModeId) != p.Mode {
			for _, m := range modes.AvailableModes {
				if string(m.Id) == p.Mode {
					if _, err := call(s, func(ctx context.Context) (acpsdk.SetSessionModeResponse, error) {
						return s.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: m.Id})
					}); err != nil {
						return "", "", s.notAsking(err)
					}
				}
			}
		}
	}
	if s.spec.Model != "" && !p.ModelFlag {
		if sel := category(opts, acpsdk.SessionConfigOptionCategoryModel); sel != nil {
			v, ok := lookup(sel, s.spec.Model)
			if !ok {
				return "", "", fmt.Errorf("%s does not offer the model %s on this account", p.Title, s.spec.Model)
			}
			if v != sel.CurrentValue {
				if err := setValue(sel.Id, v); err != nil {
					return "", "", s.fail("%s did not take the model %s: %w", p.Title, s.spec.Model, err)
				}
			}
		} else if models != nil {
			found := false
			for _, m := range models.AvailableModels {
				if string(m.ModelId) == s.spec.Model || m.Name == s.spec.Model {
					found = true
					if _, err := call(s, func(ctx context.Context) (acpsdk.UnstableSetSessionModelResponse, error) {
						return s.conn.UnstableSetSessionModel(ctx, acpsdk.UnstableSetSessionModelRequest{SessionId: sid, ModelId: acpsdk.UnstableModelId(m.ModelId)})
					}); err != nil {
						return "", "", s.fail("%s did not take the model %s: %w", p.Title, s.spec.Model, err)
					}
					models.CurrentModelId = m.ModelId
					break
				}
			}
			if !found {
				return "", "", fmt.Errorf("%s does not offer the model %s on this account", p.Title, s.spec.Model)
			}
		}
	}
	if s.spec.Effort != "" && p.Name != "copilot" { // Copilot takes it on its command line
		if sel := category(opts, acpsdk.SessionConfigOptionCategoryThoughtLevel); sel != nil {
			if v, ok := lookup(sel, s.spec.Effort); ok {
				if v != sel.CurrentValue {
					if err := setValue(sel.Id, v); err != nil && errors.Is(err, engines.ErrStopped) {
						return "", "", err
					}
				}
			} else {
				s.c.log.Info("acp: thinking level left out: the model does not take it", "agent", p.Name, "effort", s.spec.Effort)
			}
		}
	}
	if sel := category(opts, acpsdk.SessionConfigOptionCategoryThoughtLevel); sel != nil {
		effort = string(sel.CurrentValue)
	}
	if sel := category(opts, acpsdk.SessionConfigOptionCategoryModel); sel != nil {
		return string(sel.CurrentValue), effort, nil
	}
	if models != nil {
		return string(models.CurrentModelId), effort, nil
	}
	return s.spec.Model, effort, nil
}

// notAsking is the error a run stops with when the session cannot be set back to asking.
func (s *serve) notAsking(err error) error {
	if errors.Is(err, engines.ErrStopped) {
		return err
	}
	return fmt.Errorf("%s's session could not be set to ask before edits and commands, so it was not run: %w", s.p.Title, err)
}

func containsID(ids []string, id string) bool {
	for _, i := range ids {
		if i == id {
			return true
		}
	}
	return false
}

func category(opts []acpsdk.SessionConfigOption, c acpsdk.SessionConfigOptionCategory) *acpsdk.SessionConfigOptionSelect {
	for _, o := range opts {
		if o.Select != nil && o.Select.Category != nil && *o.Select.Category == c {
			return o.Select
		}
	}
	return nil
}

func values(sel *acpsdk.SessionConfigOptionSelect) []acpsdk.SessionConfigSelectOption {
	var out []acpsdk.SessionConfigSelectOption
	if u := sel.Options.Ungrouped; u != nil {
		out = append(out, *u...)
	}
	if g := sel.Options.Grouped; g != nil {
		for _, grp := range *g {
			out = append(out, grp.Options...)
		}
	}
	return out
}

func hasValue(sel *acpsdk.SessionConfigOptionSelect, v string) bool {
	_, ok := lookup(sel, v)
	return ok
}

// lookup finds want among an option's values, by value or by name.
func lookup(sel *acpsdk.SessionConfigOptionSelect, want string) (acpsdk.SessionConfigValueId, bool) {
	for _, o := range values(sel) {
		if string(o.Value) == want || o.Name == want {
			return o.Value, true
		}
	}
	return "", false
}

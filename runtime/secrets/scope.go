package secrets

import (
	"context"
	"fmt"
	"slices"
)

// Scope is which saved secrets a run gets (spec 002 §8.7.5, secretScopeFor):
//
//   - a run that names secrets (its run profile's or its assignment's settings) gets only those;
//   - any other run gets what the computer's [RunSettings] say: mode all, every environment
//     secret; mode named, only the names the settings list, possibly none.
//
// Of the secrets a run names, those with [Use.Env] go in its environment and those with [Use.Git]
// sign git in to their allowed origins. A run that names none (mode all) gets no git sign-in: a
// token goes to git only for a run someone chose to give it to.
type Scope struct {
	Env     []string // names put in the run's environment, in order
	Git     []Secret // secrets git signs in with, each to its allowed origins
	Named   bool     // the run's secrets were chosen by name (the run's own or the computer's)
	Names   []string // those names, when Named: the only secrets the run may use at all
	Missing []string // names chosen that are not saved on this computer
}

// ScopeFor works out a run's Scope from the saved secrets (list, values not needed), the
// computer's settings and the names the run itself carries.
func ScopeFor(list []Secret, rs RunSettings, runNames []string) Scope {
	var sc Scope
	names := runNames
	switch {
	case len(runNames) > 0:
		sc.Named = true
	case rs.Mode == ModeNamed:
		sc.Named, names = true, rs.Names
	default:
		for _, s := range list {
			if s.Kind == Run && s.Env {
				sc.Env = append(sc.Env, s.Name)
			}
		}
		return sc
	}
	sc.Names = slices.Clone(names)
	for _, n := range names {
		i := slices.IndexFunc(list, func(s Secret) bool { return s.Kind == Run && s.Name == n })
		if i < 0 {
			if !slices.Contains(sc.Missing, n) {
				sc.Missing = append(sc.Missing, n)
			}
			continue
		}
		s := list[i]
		if s.Env && !slices.Contains(sc.Env, n) {
			sc.Env = append(sc.Env, n)
		}
		if s.Git && len(s.Allow) > 0 && !slices.ContainsFunc(sc.Git, func(g Secret) bool { return g.Name == n }) {
			sc.Git = append(sc.Git, s)
		}
	}
	return sc
}

// Grant is a run's Scope with the values of its environment secrets.
type Grant struct {
	Scope
	Values map[string]string // environment secrets by name
}

// ForRun is the Grant of a run that names runNames (none: the computer's settings decide).
func (s *Store) ForRun(ctx context.Context, runNames []string) (Grant, error) {
	list, err := s.List(ctx)
	if err != nil {
		return Grant{}, err
	}
	rs, err := s.RunSettings(ctx)
	if err != nil {
		return Grant{}, err
	}
	g := Grant{Scope: ScopeFor(list, rs, runNames), Values: map[string]string{}}
	for _, n := range g.Env {
		v, err := s.Get(ctx, n)
		if err != nil {
			return Grant{}, err
		}
		g.Values[n] = v
	}
	return g, nil
}

// Allows reports whether the scope lets a run use the secret name by reference (secret_http): a
// run whose secrets were chosen by name uses only those; any other, every saved one.
func (sc Scope) Allows(name string) bool { return !sc.Named || slices.Contains(sc.Names, name) }

// ForCommand is the values of the secrets a node named for one command's environment: each must be
// saved here as a run secret for the environment. Each use is ledgered, never the value.
func (s *Store) ForCommand(ctx context.Context, names []string, by string) (map[string]string, error) {
	g, err := s.ForRun(ctx, names)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := g.Values[n]; !ok {
			return nil, fmt.Errorf("%s is not saved on this computer for commands' environment; your owner can save it, or allow it with `ensemble secrets allow %s --env on`.", n, n)
		}
	}
	for n := range g.Values {
		if err := s.Used(ctx, Used{Name: n, By: by, How: "env"}); err != nil {
			return nil, err
		}
	}
	return g.Values, nil
}

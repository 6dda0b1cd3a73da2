package keys

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/bridge/keyform"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(st, ledger.New(st, events.NewBus()))
}

func TestKeys(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	k, secret, err := s.Create(ctx, "  editor ", Grants{CanWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	v := secret.Reveal()
	if k.Name != "editor" || !keyform.Looks(v) || keyform.IsLaunchToken(v) || k.Hint != v[len(v)-4:] || !k.CanWrite || k.CanUseApps {
		t.Errorf("key %+v %q", k, v)
	}
	got, err := s.Check(ctx, v)
	if err != nil || got.ID != k.ID || got.Actor() != (ledger.Actor{Kind: ledger.BridgeKey, ID: k.ID, Name: "editor"}) {
		t.Errorf("check = %+v %v", got, err)
	}
	for _, bad := range []string{"", "ens_", "ens_launch_" + strings.Repeat("a", 40), "ens_" + strings.Repeat("a", 43), v + "x"} {
		if _, err := s.Check(ctx, bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("Check(%.12q) = %v", bad, err)
		}
	}
	if _, _, err := s.Create(ctx, "", Grants{}); err == nil {
		t.Error("a key without a name was made")
	}
	if _, err := s.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check(ctx, v); !errors.Is(err, ErrRevoked) {
		t.Errorf("revoked key: %v", err)
	}
	if again, err := s.Revoke(ctx, k.ID); err != nil || again.RevokedAt == nil {
		t.Errorf("revoke twice: %v", err)
	}
	if _, err := s.Revoke(ctx, "key_nope"); !problem.Is(err, problem.KindNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	list, _ := s.List(ctx)
	if len(list) != 1 || list[0].RevokedAt == nil || list[0].LastUsedAt == nil {
		t.Errorf("list = %+v", list)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	sec := Secret{"ens_topsecret"}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("key", "k", sec)
	j, _ := json.Marshal(map[string]any{"k": sec})
	for _, s := range []string{sec.String(), fmt.Sprint(sec), fmt.Sprintf("%v %s %+v %#v", sec, sec, sec, sec), string(j), logged.String()} {
		if strings.Contains(s, "topsecret") {
			t.Errorf("printed the key: %s", s)
		}
	}
}

package secrets

import (
	"context"
	"errors"
	"testing"
)

// A passphrase locks secret.key: the store opens only with it, the values stay the same, and it
// comes off again.
func TestPassphrase(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, st := open(t, dir)
	if err := s.Set(ctx, "DEPLOY_TOKEN", Run, value, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := SetPassphrase(dir, "", "short"); err == nil {
		t.Fatal("a 5-character passphrase was taken")
	}
	if err := SetPassphrase(dir, "", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if locked, _ := KeyLocked(dir); !locked {
		t.Fatal("the key is not locked")
	}
	if _, err := loadLocalKey(dir, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("a locked key opened without its passphrase: %v", err)
	}
	if _, err := loadLocalKey(dir, func() (string, error) { return "wrong passphrase", nil }); err == nil {
		t.Fatal("a wrong passphrase opened the key")
	}
	if err := SetPassphrase(dir, "wrong passphrase", ""); err == nil {
		t.Fatal("the passphrase came off with a wrong one")
	}
	s2, st2 := openWith(t, dir, func() (string, error) { return "correct horse battery", nil })
	if v, err := s2.Get(ctx, "DEPLOY_TOKEN"); err != nil || v != value {
		t.Fatalf("after locking: %q, %v", v, err)
	}
	st2.Close()
	if err := SetPassphrase(dir, "correct horse battery", ""); err != nil {
		t.Fatal(err)
	}
	if locked, _ := KeyLocked(dir); locked {
		t.Fatal("the passphrase did not come off")
	}
	s3, _ := open(t, dir)
	if v, err := s3.Get(ctx, "DEPLOY_TOKEN"); err != nil || v != value {
		t.Fatalf("after unlocking: %q, %v", v, err)
	}
}

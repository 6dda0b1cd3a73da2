package relay

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testSealer stands in for the runtime's local key: AES-256-GCM bound to the context.
type testSealer struct{ aead cipher.AEAD }

func newTestSealer() testSealer {
	key := make([]byte, 32)
	rand.Read(key)
	b, _ := aes.NewCipher(key)
	g, _ := cipher.NewGCM(b)
	return testSealer{g}
}

func (s testSealer) Seal(plain []byte, context string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, []byte(context))
}

func (s testSealer) Open(box []byte, context string) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(box) < n {
		return nil, errors.New("short")
	}
	return s.aead.Open(nil, box[:n], box[n:], []byte(context))
}

// The device key is kept sealed: made, kept across loads, unreadable without the local key, and
// an older key kept in the clear is sealed in place with its id.
func TestKeyFile(t *testing.T) {
	seal := newTestSealer()
	path := filepath.Join(t.TempDir(), "relay", "device.key")
	k1, err := LoadOrCreateKey(path, seal)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKey(path, seal)
	if err != nil || k1.ID() != k2.ID() {
		t.Fatalf("key not kept: %v, %s vs %s", err, k1.ID(), k2.ID())
	}
	b, _ := os.ReadFile(path)
	if blk, _ := pem.Decode(b); blk == nil || blk.Type != sealedKeyPEMType || bytes.Contains(b, k1.priv.Seed()) ||
		bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(k1.priv.Seed())[:20])) {
		t.Fatalf("the key file is not sealed:\n%s", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if _, err := LoadOrCreateKey(path, newTestSealer()); err == nil {
		t.Fatal("opened with another local key")
	}

	// An older Ensemble's key in the clear.
	old := NewDeviceKey()
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: keyPEMType, Bytes: old.priv.Seed()}), 0o600)
	k3, err := LoadOrCreateKey(path, seal)
	if err != nil || k3.ID() != old.ID() {
		t.Fatalf("older key: %v, id %s, want %s", err, k3.ID(), old.ID())
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(keyPEMType+"-----")) && !bytes.Contains(b, []byte(sealedKeyPEMType)) {
		t.Fatalf("the older key was not sealed in place:\n%s", b)
	}

	os.WriteFile(path, []byte("garbage"), 0o600)
	if _, err := LoadOrCreateKey(path, seal); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged key: %v", err)
	}
}

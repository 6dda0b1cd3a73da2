package secrets

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SealKeyFile is the computer's seal key pair, in the data folder (spec 002 §8.7.2).
const SealKeyFile = "seal-key.json"

// SealAlg names the seal key's algorithm as the browser is told it.
const SealAlg = "ECDH-P256"

// sealKeyContext binds the sealed private key to what it is.
const sealKeyContext = "ensemble-seal-key-v1"

// SealPublic is what a browser is given to seal a value for this computer: the public key as SPKI
// (base64url), its id and its fingerprint, both from the SHA-256 of the SPKI.
type SealPublic struct {
	Kid         string `json:"kid"`
	Alg         string `json:"alg"`
	SPKI        string `json:"spki"`
	Fingerprint string `json:"fingerprint"`
}

// sealKey is the computer's ECDH P-256 key pair.
type sealKey struct {
	priv *ecdh.PrivateKey
	pub  SealPublic
}

// sealKeyFile is seal-key.json: the private key sealed with the local key, never in the clear.
type sealKeyFile struct {
	V         int       `json:"v"`
	Alg       string    `json:"alg"`
	Kid       string    `json:"kid"`
	SPKI      string    `json:"spki"`
	Private   string    `json:"private"` // base64url of the local key's seal of the raw private scalar
	CreatedAt time.Time `json:"createdAt"`
}

// loadSealKey reads seal-key.json from dir, making the key pair on first use.
func loadSealKey(dir string, k *localKey, now func() time.Time) (*sealKey, error) {
	path := filepath.Join(dir, SealKeyFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createSealKey(path, k, now)
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: seal key %s: %w", path, err)
	}
	if err := keepPrivate(path); err != nil {
		return nil, fmt.Errorf("secrets: seal key %s: %w", path, err)
	}
	var f sealKeyFile
	if err := json.Unmarshal(raw, &f); err != nil || f.V != 1 || f.Alg != SealAlg {
		return nil, fmt.Errorf("secrets: seal key %s is not one this Ensemble wrote; remove it to make a new one (pages must then be given the new key)", path)
	}
	box, err := base64.RawURLEncoding.DecodeString(f.Private)
	if err != nil {
		return nil, fmt.Errorf("secrets: seal key %s: private key is not base64url", path)
	}
	scalar, err := k.open(box, sealKeyContext)
	if err != nil {
		return nil, fmt.Errorf("secrets: seal key %s: %w", path, err)
	}
	priv, err := ecdh.P256().NewPrivateKey(scalar)
	if err != nil {
		return nil, fmt.Errorf("secrets: seal key %s: %w", path, err)
	}
	sk, err := newSealKey(priv)
	if err != nil {
		return nil, err
	}
	// The public half is in the file for people to read; it must be the private key's own.
	if subtle.ConstantTimeCompare([]byte(sk.pub.SPKI), []byte(f.SPKI)) != 1 {
		return nil, fmt.Errorf("secrets: seal key %s: its public key is not its private key's; the file was changed outside Ensemble", path)
	}
	return sk, nil
}

func createSealKey(path string, k *localKey, now func() time.Time) (*sealKey, error) {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("secrets: seal key: %w", err)
	}
	sk, err := newSealKey(priv)
	if err != nil {
		return nil, err
	}
	f := sealKeyFile{V: 1, Alg: SealAlg, Kid: sk.pub.Kid, SPKI: sk.pub.SPKI, CreatedAt: now().UTC(),
		Private: base64.RawURLEncoding.EncodeToString(k.seal(priv.Bytes(), sealKeyContext))}
	raw, _ := json.MarshalIndent(f, "", "  ")
	if err := writeNew(path, append(raw, '\n')); err != nil {
		if errors.Is(err, fs.ErrExist) { // another runtime made it first: use that one
			return loadSealKey(filepath.Dir(path), k, now)
		}
		return nil, fmt.Errorf("secrets: seal key %s: %w", path, err)
	}
	return sk, nil
}

// writeNew writes a file that must not exist yet, mode 0600.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

func newSealKey(priv *ecdh.PrivateKey) (*sealKey, error) {
	pub, err := PublicFor(priv.PublicKey())
	if err != nil {
		return nil, err
	}
	return &sealKey{priv: priv, pub: pub}, nil
}

// PublicFor describes a P-256 public key as a browser is given it.
func PublicFor(pub *ecdh.PublicKey) (SealPublic, error) {
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return SealPublic{}, fmt.Errorf("secrets: seal key: %w", err)
	}
	kid, fp := KeyID(spki)
	return SealPublic{Kid: kid, Alg: SealAlg, SPKI: base64.RawURLEncoding.EncodeToString(spki), Fingerprint: fp}, nil
}

// KeyID returns a key's id (the first 16 hex digits of the SHA-256 of its SPKI, lower case) and
// its fingerprint (the same digits upper case in four groups: "7F98 5267 E5FD 5A05").
func KeyID(spki []byte) (kid, fingerprint string) {
	sum := sha256.Sum256(spki)
	kid = hex.EncodeToString(sum[:8])
	up := strings.ToUpper(kid)
	return kid, up[0:4] + " " + up[4:8] + " " + up[8:12] + " " + up[12:16]
}

// SealKey is this computer's public seal key.
func (s *Store) SealKey() SealPublic { return s.seal.pub }

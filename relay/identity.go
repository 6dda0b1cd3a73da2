package relay

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base32"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// idEncoding is lower-case base32 without padding: 16 bytes make 26 DNS-safe characters.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// IDLen is the length of a device id.
const IDLen = 26

// ID is a runtime's public name on a relay: lower-case base32 of the first 16 bytes of SHA-256 of its
// Ed25519 public key. It is public; the hostname <id>.<relay-domain> is stable for as long as the key.
func ID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return idEncoding.EncodeToString(h[:16])
}

// ValidID reports whether s has the shape of an ID.
func ValidID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// DeviceKey is a runtime's Ed25519 key. It never prints itself.
type DeviceKey struct{ priv ed25519.PrivateKey }

// NewDeviceKey makes a fresh key.
func NewDeviceKey() DeviceKey {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	return DeviceKey{priv: priv}
}

// Public is the key's public half.
func (k DeviceKey) Public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }

// ID is the key's device id.
func (k DeviceKey) ID() string { return ID(k.Public()) }

func (k DeviceKey) String() string       { return "devicekey:" + k.ID() }
func (k DeviceKey) GoString() string     { return k.String() }
func (k DeviceKey) LogValue() slog.Value { return slog.StringValue(k.String()) }
func (k DeviceKey) MarshalJSON() ([]byte, error) {
	return []byte(`"` + k.String() + `"`), nil
}

// Sealer keeps the device key encrypted at rest: the runtime's local key (runtime/secrets), which
// binds each box to a context naming what it holds.
type Sealer interface {
	Seal(plain []byte, context string) []byte
	Open(box []byte, context string) ([]byte, error)
}

const (
	keyPEMType       = "ENSEMBLE DEVICE KEY" // the seed in the clear: read once, then sealed
	sealedKeyPEMType = "ENSEMBLE SEALED DEVICE KEY"
	keyContext       = "ensemble-device-key-v1"
)

// LoadOrCreateKey reads the key at path, or makes one and writes it there, sealed (mode 0600). A
// key kept in the clear by an older Ensemble is sealed in place, keeping its id (and the phones
// paired with it).
func LoadOrCreateKey(path string, seal Sealer) (DeviceKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		k := NewDeviceKey()
		return k, SaveKey(path, k, seal)
	}
	if err != nil {
		return DeviceKey{}, fmt.Errorf("device key: %w", err)
	}
	damaged := fmt.Errorf("device key %s is damaged; rotate the phone address with `ensemble pair rotate` (phones must pair again)", path)
	blk, _ := pem.Decode(b)
	switch {
	case blk == nil:
		return DeviceKey{}, damaged
	case blk.Type == sealedKeyPEMType:
		seed, err := seal.Open(blk.Bytes, keyContext)
		if err != nil {
			return DeviceKey{}, fmt.Errorf("device key %s: %w", path, err)
		}
		if len(seed) != ed25519.SeedSize {
			return DeviceKey{}, damaged
		}
		return DeviceKey{priv: ed25519.NewKeyFromSeed(seed)}, nil
	case blk.Type == keyPEMType && len(blk.Bytes) == ed25519.SeedSize:
		k := DeviceKey{priv: ed25519.NewKeyFromSeed(blk.Bytes)}
		return k, SaveKey(path, k, seal)
	}
	return DeviceKey{}, damaged
}

// SaveKey writes k to path, sealed, replacing what was there in one rename.
func SaveKey(path string, k DeviceKey, seal Sealer) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("device key: %w", err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: sealedKeyPEMType, Bytes: seal.Seal(k.priv.Seed(), keyContext)})
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("device key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("device key: %w", err)
	}
	return nil
}

// authMessage is what a runtime signs to log in: bound to the relay's name, its fresh nonce and
// the TLS connection the login travels on (binding, see [tlsBinding]).
func authMessage(relayHost string, nonce, binding []byte) []byte {
	m := make([]byte, 0, 32+len(relayHost)+len(nonce)+len(binding))
	m = append(m, "ensemble-relay-v2\x00"...)
	m = append(m, strings.ToLower(relayHost)...)
	m = append(m, 0)
	m = append(m, nonce...)
	return append(m, binding...)
}

// tlsBinding is the value both ends of one TLS connection, and only they, compute alike: its
// keying-material exporter. A connection without one (TLS 1.2 without extended master secret)
// cannot carry a login.
func tlsBinding(cs *tls.ConnectionState) ([]byte, error) {
	if cs == nil {
		return nil, errors.New("the tunnel is not over TLS")
	}
	b, err := cs.ExportKeyingMaterial(exporterLabel, nil, bindingLen)
	if err != nil {
		return nil, fmt.Errorf("the tunnel's TLS connection has no exporter (it needs TLS 1.3, or 1.2 with extended master secret): %w", err)
	}
	return b, nil
}

// signAuth makes a frameClientAuth payload.
func (k DeviceKey) signAuth(relayHost string, nonce, binding []byte, joinToken string) []byte {
	p := append([]byte{}, k.Public()...)
	p = append(p, ed25519.Sign(k.priv, authMessage(relayHost, nonce, binding))...)
	return append(p, joinToken...)
}

// verifyAuth checks a frameClientAuth payload and returns the id it proves.
func verifyAuth(relayHost string, nonce, binding, p []byte) (id, joinToken string, err error) {
	if len(p) < ed25519.PublicKeySize+ed25519.SignatureSize || len(p) > ed25519.PublicKeySize+ed25519.SignatureSize+64 {
		return "", "", errors.New("login is malformed")
	}
	pub := ed25519.PublicKey(p[:ed25519.PublicKeySize])
	sig := p[ed25519.PublicKeySize : ed25519.PublicKeySize+ed25519.SignatureSize]
	if !ed25519.Verify(pub, authMessage(relayHost, nonce, binding), sig) {
		return "", "", errors.New("login signature does not verify for this relay and this TLS connection (is a proxy between the runtime and the relay ending TLS?)")
	}
	return ID(pub), string(p[ed25519.PublicKeySize+ed25519.SignatureSize:]), nil
}

package secrets

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// A sealed box carries one value from a browser to this computer alone (spec 002 §8.7.2). The
// browser side is WebCrypto; this is the format both sides follow, byte for byte.
//
// Key agreement: a fresh ephemeral P-256 key pair per box; ECDH with the computer's public key
// (given as SPKI, [SealPublic]); the shared secret is the 32-byte x coordinate (WebCrypto's
// deriveBits, Go's ecdh.PrivateKey.ECDH).
//
// Key derivation: HKDF-SHA-256 over the shared secret, salt = the ephemeral public key in its raw
// uncompressed form (65 bytes, 0x04 || X || Y; WebCrypto's exportKey("raw")), info =
// "ensemble-seal-v1", 32 bytes of output: the AES-256-GCM key.
//
// Encryption: AES-256-GCM, a random 12-byte IV, 16-byte tag appended to the ciphertext (as
// WebCrypto returns it). The plaintext is the JSON {"value":"…","allow":["https://…"]} (allow may
// be left out). The additional data is the exact bytes of the JSON object
//
//	{"v":1,"purpose":"secret","kid":"…","deviceId":"…","decisionId":"…","name":"…",
//	 "origin":"https://…","expiresAt":"2026-01-02T03:04:05.000Z","nonce":"…"}
//
// in that order: kid is the computer key's id, decisionId the card's id, origin the page's own
// origin, expiresAt an RFC 3339 time (toISOString) 10 minutes ahead, nonce at least 16 random bytes
// in base64url. The computer parses those same bytes; it never re-encodes them.
//
// On the wire: {"sealed": {"v":1,"kid":"…","epk":"…","iv":"…","ct":"…","aad":"…"}}, where epk, iv,
// ct and aad are base64url without padding and kid is the same as in the additional data.
type Box struct {
	V   int    `json:"v"`
	Kid string `json:"kid"`
	EPK string `json:"epk"`
	IV  string `json:"iv"`
	CT  string `json:"ct"`
	AAD string `json:"aad"`
}

// AAD is a box's additional data: what the box is bound to.
type AAD struct {
	V          int    `json:"v"`
	Purpose    string `json:"purpose"`
	Kid        string `json:"kid"`
	DeviceID   string `json:"deviceId"`
	DecisionID string `json:"decisionId"`
	Name       string `json:"name"`
	Origin     string `json:"origin"`
	ExpiresAt  string `json:"expiresAt"`
	Nonce      string `json:"nonce"`
}

// Sealed is a box's plaintext.
type Sealed struct {
	Value string   `json:"value"`
	Allow []string `json:"allow,omitempty"`
}

// Expect is what the computer requires of a box it opens.
type Expect struct {
	// DeviceID is this computer's id where it has one; not checked when empty.
	DeviceID   string
	DecisionID string
	Name       string
	// Origins are the sites this computer trusts to seal for it (the page's own origin).
	Origins []string
	// Purpose is "secret" when empty.
	Purpose string
}

const (
	sealInfo      = "ensemble-seal-v1"
	sealMaxAhead  = 15 * time.Minute // a box expiring later than this was not made for now
	sealMaxWire   = 64 << 10
	sealMinNonce  = 16
	sealMaxNonce  = 128
	purposeSecret = "secret"
)

// SealError is a box refused; Code is the reason's name (seal_device, seal_origin, seal_expired,
// seal_replay, …) and Msg one sentence.
type SealError struct {
	Code string
	Msg  string
}

func (e *SealError) Error() string { return e.Msg }

func refuse(code, format string, args ...any) *SealError {
	return &SealError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

var b64 = base64.RawURLEncoding

// Seal makes a box for the public key spki (base64url) holding v, bound to aad. aad.Kid and
// aad.V are filled in from the key when empty. Tests use it, and so will any Go side that seals
// for a computer.
func Seal(spki string, aad AAD, v Sealed) (Box, error) {
	der, err := b64.DecodeString(spki)
	if err != nil {
		return Box{}, fmt.Errorf("secrets: seal: the key is not base64url")
	}
	pk, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return Box{}, fmt.Errorf("secrets: seal: %w", err)
	}
	ep, ok := pk.(*ecdsa.PublicKey)
	if !ok {
		return Box{}, fmt.Errorf("secrets: seal: the key is not P-256")
	}
	pub, err := ep.ECDH()
	if err != nil || pub.Curve() != ecdh.P256() {
		return Box{}, fmt.Errorf("secrets: seal: the key is not P-256")
	}
	kid, _ := KeyID(der)
	if aad.Kid == "" {
		aad.Kid = kid
	}
	if aad.V == 0 {
		aad.V = 1
	}
	eph, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return Box{}, fmt.Errorf("secrets: seal: %w", err)
	}
	shared, err := eph.ECDH(pub)
	if err != nil {
		return Box{}, fmt.Errorf("secrets: seal: %w", err)
	}
	epk := eph.PublicKey().Bytes()
	aead, err := boxCipher(shared, epk)
	if err != nil {
		return Box{}, err
	}
	ad, _ := json.Marshal(aad)
	plain, _ := json.Marshal(v)
	iv := make([]byte, aead.NonceSize())
	rand.Read(iv)
	return Box{V: 1, Kid: kid, EPK: b64.EncodeToString(epk), IV: b64.EncodeToString(iv),
		CT: b64.EncodeToString(aead.Seal(nil, iv, plain, ad)), AAD: b64.EncodeToString(ad)}, nil
}

// boxCipher derives a box's AES-256-GCM from the ECDH shared secret and the ephemeral key.
func boxCipher(shared, epk []byte) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, shared, epk, sealInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("secrets: seal: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets: seal: %w", err)
	}
	return cipher.NewGCM(block)
}

// Open opens a box sealed for this computer's key and checks, for itself, what it is bound to:
// this key, the device, the card, the name, a trusted origin, the expiry (in the future, and at
// most 15 minutes ahead) and that its nonce was never seen. A box that opens is taken: the same box
// is refused from then on. Every refusal is a *SealError.
func (s *Store) Open(ctx context.Context, b Box, expect Expect) (Sealed, error) {
	if expect.DecisionID == "" || expect.Name == "" || len(expect.Origins) == 0 {
		return Sealed{}, fmt.Errorf("secrets: open: expect names no decision, name or origin")
	}
	if expect.Purpose == "" {
		expect.Purpose = purposeSecret
	}
	if b.V != 1 {
		return Sealed{}, refuse("seal_version", "The box is version %d; this Ensemble opens version 1; reload the page.", b.V)
	}
	if len(b.EPK)+len(b.IV)+len(b.CT)+len(b.AAD)+len(b.Kid) > sealMaxWire {
		return Sealed{}, refuse("seal_shape", "The box is larger than %d KB.", sealMaxWire>>10)
	}
	if b.Kid != s.seal.pub.Kid {
		return Sealed{}, refuse("seal_key", "The box was sealed for key %s, not this computer's (%s): pair again, and compare the fingerprint with `ensemble secrets fingerprint`.", clip(b.Kid), s.seal.pub.Fingerprint)
	}
	epk, err1 := b64.DecodeString(b.EPK)
	iv, err2 := b64.DecodeString(b.IV)
	ct, err3 := b64.DecodeString(b.CT)
	ad, err4 := b64.DecodeString(b.AAD)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(epk) != 65 || len(iv) != 12 || len(ct) < 16 {
		return Sealed{}, refuse("seal_shape", "The box is not well formed (epk, iv, ct and aad must be base64url; epk 65 bytes, iv 12).")
	}
	eph, err := ecdh.P256().NewPublicKey(epk)
	if err != nil {
		return Sealed{}, refuse("seal_shape", "The box's ephemeral key is not a P-256 point.")
	}
	shared, err := s.seal.priv.ECDH(eph)
	if err != nil {
		return Sealed{}, refuse("seal_shape", "The box's ephemeral key is not a P-256 point.")
	}
	aead, err := boxCipher(shared, epk)
	if err != nil {
		return Sealed{}, err
	}
	plain, err := aead.Open(nil, iv, ct, ad)
	if err != nil {
		return Sealed{}, refuse("seal_open", "The box does not open with this computer's key: it was changed on the way, or sealed for another key.")
	}
	var a AAD
	if err := json.Unmarshal(ad, &a); err != nil {
		return Sealed{}, refuse("seal_shape", "The box's associated data is not a JSON object.")
	}
	now := s.now()
	exp, err := checkAAD(a, s.seal.pub.Kid, expect, now)
	if err != nil {
		return Sealed{}, err
	}
	var v Sealed
	if err := json.Unmarshal(plain, &v); err != nil {
		return Sealed{}, refuse("seal_shape", "The box's contents are not {value, allow}.")
	}
	if p := ValueProblem(v.Value); p != "" {
		return Sealed{}, refuse("seal_value", "%s", p)
	}
	if err := s.take(ctx, a.Nonce, exp, now); err != nil {
		return Sealed{}, err
	}
	return v, nil
}

// checkAAD checks what a box is bound to and returns its expiry.
func checkAAD(a AAD, kid string, expect Expect, now time.Time) (time.Time, error) {
	switch {
	case a.V != 1:
		return time.Time{}, refuse("seal_version", "The box's associated data is version %d, not 1; reload the page.", a.V)
	case a.Purpose != expect.Purpose:
		return time.Time{}, refuse("seal_purpose", "The box was sealed for %q, not %q.", clip(a.Purpose), expect.Purpose)
	case a.Kid != kid:
		return time.Time{}, refuse("seal_key", "The box's associated data names key %s, not this computer's.", clip(a.Kid))
	case expect.DeviceID != "" && a.DeviceID != expect.DeviceID:
		return time.Time{}, refuse("seal_device", "The box was sealed for another computer.")
	case a.DecisionID != expect.DecisionID:
		return time.Time{}, refuse("seal_decision", "The box was sealed for another card.")
	case a.Name != expect.Name:
		return time.Time{}, refuse("seal_name", "The box was sealed for the secret %s, not %s.", clip(a.Name), expect.Name)
	case !slices.Contains(expect.Origins, a.Origin):
		return time.Time{}, refuse("seal_origin", "The box was sealed on %s, a site this computer does not trust for secrets.", clip(a.Origin))
	case len(a.Nonce) < b64.EncodedLen(sealMinNonce) || len(a.Nonce) > sealMaxNonce:
		return time.Time{}, refuse("seal_shape", "The box's nonce must be 16 to 96 random bytes in base64url.")
	}
	exp, err := store.ParseTime(a.ExpiresAt)
	switch {
	case err != nil:
		return time.Time{}, refuse("seal_shape", "The box's expiresAt is not an RFC 3339 time.")
	case !now.Before(exp):
		return time.Time{}, refuse("seal_expired", "The box expired at %s; type the secret again.", exp.UTC().Format(time.RFC3339))
	case exp.Sub(now) > sealMaxAhead:
		return time.Time{}, refuse("seal_expired", "The box expires more than 15 minutes ahead; check this computer's clock and the page's.")
	}
	return exp, nil
}

// take records a box's nonce, refusing one seen before. Nonces are kept until their box expires:
// after that the expiry check refuses the box anyway, so the row is dropped.
func (s *Store) take(ctx context.Context, nonce string, exp, now time.Time) error {
	return s.w.Exec(ctx, func(t *ledger.Tx) error {
		if _, err := t.ExecContext(ctx, "DELETE FROM secret_seal_seen WHERE expires_at <= ?", store.Stamp(now)); err != nil {
			return fmt.Errorf("secrets: open: %w", err)
		}
		res, err := t.ExecContext(ctx, "INSERT INTO secret_seal_seen (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING",
			nonce, store.Stamp(exp))
		if err != nil {
			return fmt.Errorf("secrets: open: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return refuse("seal_replay", "This box was already used; type the secret again for a new one.")
		}
		return nil
	})
}

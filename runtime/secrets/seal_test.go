package secrets

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// newAAD is what a page seals for card "dec_1" and secret STRIPE_API_KEY, expiring in 10 minutes.
func newAAD(now time.Time) AAD {
	nonce := make([]byte, 18)
	rand.Read(nonce)
	return AAD{Purpose: "secret", DeviceID: "dev_1", DecisionID: "dec_1", Name: "STRIPE_API_KEY",
		Origin: "https://app.example", ExpiresAt: now.Add(10 * time.Minute).UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Nonce: b64.EncodeToString(nonce)}
}

var expect = Expect{DeviceID: "dev_1", DecisionID: "dec_1", Name: "STRIPE_API_KEY", Origins: []string{"https://app.example"}}

func TestSealKeyDescribesItself(t *testing.T) {
	s, _ := open(t, t.TempDir())
	pk := s.SealKey()
	der, err := b64.DecodeString(pk.SPKI)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x509.ParsePKIXPublicKey(der); err != nil {
		t.Fatalf("spki: %v", err)
	}
	kid, fp := KeyID(der)
	if pk.Kid != kid || pk.Fingerprint != fp || pk.Alg != "ECDH-P256" || len(kid) != 16 {
		t.Fatalf("public %+v", pk)
	}
	if len(fp) != 19 || fp != strings.ToUpper(kid[0:4]+" "+kid[4:8]+" "+kid[8:12]+" "+kid[12:16]) {
		t.Fatalf("fingerprint %q", fp)
	}
}

func TestOpen(t *testing.T) {
	s, _ := open(t, t.TempDir())
	other, _ := open(t, t.TempDir())
	ctx := context.Background()
	now := time.Now()
	spki := s.SealKey().SPKI
	seal := func(t *testing.T, spki string, a AAD) Box {
		t.Helper()
		b, err := Seal(spki, a, Sealed{Value: value, Allow: []string{"https://api.stripe.com"}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	good := seal(t, spki, newAAD(now))
	got, err := s.Open(ctx, good, expect)
	if err != nil || got.Value != value || len(got.Allow) != 1 {
		t.Fatalf("open: %+v %v", got, err)
	}
	// The wire form round-trips through JSON as a browser sends it.
	raw, _ := json.Marshal(map[string]any{"sealed": seal(t, spki, newAAD(now))})
	var wire struct{ Sealed Box }
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, wire.Sealed, expect); err != nil {
		t.Fatalf("open from the wire: %v", err)
	}

	tamper := func(b Box, f func(*AAD)) Box {
		var a AAD
		ad, _ := b64.DecodeString(b.AAD)
		json.Unmarshal(ad, &a)
		f(&a)
		ad, _ = json.Marshal(a)
		b.AAD = b64.EncodeToString(ad)
		return b
	}
	for _, tc := range []struct {
		name   string
		box    func() Box
		expect Expect
		code   string
	}{
		{"replayed", func() Box { return good }, expect, "seal_replay"},
		{"tampered aad", func() Box {
			return tamper(seal(t, spki, newAAD(now)), func(a *AAD) { a.Name = "OTHER" })
		}, expect, "seal_open"},
		{"tampered ciphertext", func() Box {
			b := seal(t, spki, newAAD(now))
			ct, _ := b64.DecodeString(b.CT)
			ct[0] ^= 1
			b.CT = b64.EncodeToString(ct)
			return b
		}, expect, "seal_open"},
		{"wrong kid", func() Box { return seal(t, other.SealKey().SPKI, newAAD(now)) }, expect, "seal_key"},
		{"sealed for another key, labelled ours", func() Box {
			b := seal(t, other.SealKey().SPKI, newAAD(now))
			b.Kid = s.SealKey().Kid
			return b
		}, expect, "seal_open"},
		{"aad names another kid", func() Box {
			a := newAAD(now)
			a.Kid = other.SealKey().Kid
			return seal(t, spki, a)
		}, expect, "seal_key"},
		{"expired", func() Box {
			a := newAAD(now)
			a.ExpiresAt = now.Add(-time.Second).UTC().Format(time.RFC3339Nano)
			return seal(t, spki, a)
		}, expect, "seal_expired"},
		{"too far ahead", func() Box {
			a := newAAD(now)
			a.ExpiresAt = now.Add(16 * time.Minute).UTC().Format(time.RFC3339Nano)
			return seal(t, spki, a)
		}, expect, "seal_expired"},
		{"other device", func() Box { return seal(t, spki, newAAD(now)) },
			Expect{DeviceID: "dev_2", DecisionID: "dec_1", Name: "STRIPE_API_KEY", Origins: expect.Origins}, "seal_device"},
		{"other card", func() Box { return seal(t, spki, newAAD(now)) },
			Expect{DecisionID: "dec_2", Name: "STRIPE_API_KEY", Origins: expect.Origins}, "seal_decision"},
		{"other name", func() Box { return seal(t, spki, newAAD(now)) },
			Expect{DecisionID: "dec_1", Name: "OTHER_KEY", Origins: expect.Origins}, "seal_name"},
		{"untrusted origin", func() Box { return seal(t, spki, newAAD(now)) },
			Expect{DecisionID: "dec_1", Name: "STRIPE_API_KEY", Origins: []string{"https://node.example"}}, "seal_origin"},
		{"other purpose", func() Box {
			a := newAAD(now)
			a.Purpose = "sudo"
			return seal(t, spki, a)
		}, expect, "seal_purpose"},
		{"short nonce", func() Box {
			a := newAAD(now)
			a.Nonce = "abc"
			return seal(t, spki, a)
		}, expect, "seal_shape"},
		{"version", func() Box {
			b := seal(t, spki, newAAD(now))
			b.V = 2
			return b
		}, expect, "seal_version"},
		{"bad iv", func() Box {
			b := seal(t, spki, newAAD(now))
			b.IV = "AAAA"
			return b
		}, expect, "seal_shape"},
		{"bad epk", func() Box {
			b := seal(t, spki, newAAD(now))
			b.EPK = b64.EncodeToString(make([]byte, 65))
			return b
		}, expect, "seal_shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Open(ctx, tc.box(), tc.expect)
			var se *SealError
			if !errors.As(err, &se) || se.Code != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if strings.Contains(se.Msg, value) {
				t.Fatalf("refusal holds the value: %q", se.Msg)
			}
		})
	}
}

func TestSeenNoncesExpire(t *testing.T) {
	s, st := open(t, t.TempDir())
	ctx := context.Background()
	now := time.Now()
	for range 3 {
		if _, err := s.Open(ctx, mustSeal(t, s, newAAD(now)), expect); err != nil {
			t.Fatal(err)
		}
	}
	s.now = func() time.Time { return now.Add(11 * time.Minute) }
	if _, err := s.Open(ctx, mustSeal(t, s, newAAD(now.Add(11*time.Minute))), expect); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.Reader().QueryRow("SELECT count(*) FROM secret_seal_seen").Scan(&n); err != nil || n != 1 {
		t.Fatalf("seen nonces kept: %d %v, want only the live one", n, err)
	}
}

func mustSeal(t *testing.T, s *Store, a AAD) Box {
	t.Helper()
	b, err := Seal(s.SealKey().SPKI, a, Sealed{Value: value})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

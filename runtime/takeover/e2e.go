// Package takeover is the wire of a live view between the owner's page and this runtime (spec 002
// §8.16.2, §8.17): the end-to-end encryption of its messages, so a relay in between sees only
// ciphertext, the terminal frames and browser pictures it carries (frame.go, jpeg.go), and the pace
// of a browser's screencast (pace.go).
package takeover

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// The encryption, which frontend/src/lib/e2e.ts follows byte for byte:
//
// The page makes a random 32-byte secret and seals it for this computer's key (the sealed box of
// runtime/secrets, purpose "takeover", decisionId the takeover's id, name the terminal's session).
// Both sides derive one AES-256-GCM key per direction with HKDF-SHA-256: the secret as the input
// key, the takeover's id as the salt, and the direction as the info ([InfoPageToRuntime],
// [InfoRuntimeToPage]). Keys per direction keep a message from being reflected back to its sender.
//
// Each message is a 12-byte IV then the ciphertext with its 16-byte tag. The IV is four zero bytes
// and the message's sequence number (big-endian, 64 bits), which starts at 1 and rises by one per
// message in each direction; the IV is also the additional data. A receiver takes only numbers
// above the last it took, so a relay cannot replay or reorder messages, only drop or delay them.
const (
	InfoPageToRuntime = "ensemble-takeover-v1 page→runtime"
	InfoRuntimeToPage = "ensemble-takeover-v1 runtime→page"
	SecretSize        = 32
	ivSize            = 12
	tagSize           = 16
)

// ErrSequence is a message whose number is not above the last one taken.
var ErrSequence = errors.New("takeover: a message came again or out of order")

// ErrOpen is a message that does not open: changed on the way, or made for another takeover or
// direction.
var ErrOpen = errors.New("takeover: a message does not open with this takeover's key")

// Channel is one side's pair of keys: one to seal what it sends, one to open what it receives,
// with the sequence numbers of each. It is not safe for concurrent use by several senders or
// several receivers; one of each is fine.
type Channel struct {
	send, recv cipher.AEAD
	sent, took uint64
}

// RuntimeChannel is the runtime's side: it sends runtime→page and receives page→runtime.
func RuntimeChannel(secret []byte, takeoverID string) (*Channel, error) {
	return newChannel(secret, takeoverID, InfoRuntimeToPage, InfoPageToRuntime)
}

// PageChannel is the page's side, for tests and any Go client.
func PageChannel(secret []byte, takeoverID string) (*Channel, error) {
	return newChannel(secret, takeoverID, InfoPageToRuntime, InfoRuntimeToPage)
}

func newChannel(secret []byte, takeoverID, sendInfo, recvInfo string) (*Channel, error) {
	if len(secret) != SecretSize {
		return nil, fmt.Errorf("takeover: the secret is %d bytes, not %d", len(secret), SecretSize)
	}
	if takeoverID == "" {
		return nil, errors.New("takeover: no takeover id to derive the keys with")
	}
	send, err := aead(secret, takeoverID, sendInfo)
	if err != nil {
		return nil, err
	}
	recv, err := aead(secret, takeoverID, recvInfo)
	if err != nil {
		return nil, err
	}
	return &Channel{send: send, recv: recv}, nil
}

// DeriveKey is one direction's AES-256 key.
func DeriveKey(secret []byte, takeoverID, info string) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, []byte(takeoverID), info, 32)
}

func aead(secret []byte, takeoverID, info string) (cipher.AEAD, error) {
	key, err := DeriveKey(secret, takeoverID, info)
	if err != nil {
		return nil, fmt.Errorf("takeover: derive a key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("takeover: %w", err)
	}
	return cipher.NewGCM(block)
}

func ivOf(seq uint64) []byte {
	iv := make([]byte, ivSize)
	binary.BigEndian.PutUint64(iv[4:], seq)
	return iv
}

// Seal encrypts plain as the next message this side sends.
func (c *Channel) Seal(plain []byte) []byte {
	c.sent++
	iv := ivOf(c.sent)
	return c.send.Seal(iv, iv, plain, iv)
}

// Open decrypts a message the other side sent, refusing one whose number is not above the last
// taken ([ErrSequence]) or that does not open ([ErrOpen]). A refused message changes nothing.
func (c *Channel) Open(msg []byte) ([]byte, error) {
	if len(msg) < ivSize+tagSize {
		return nil, ErrOpen
	}
	iv := msg[:ivSize]
	if iv[0]|iv[1]|iv[2]|iv[3] != 0 {
		return nil, ErrOpen
	}
	seq := binary.BigEndian.Uint64(iv[4:])
	if seq <= c.took {
		return nil, ErrSequence
	}
	plain, err := c.recv.Open(nil, iv, msg[ivSize:], iv)
	if err != nil {
		return nil, ErrOpen
	}
	c.took = seq
	return plain, nil
}

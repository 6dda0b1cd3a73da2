// Package relay is Ensemble's blind relay and the runtime's tunnel to it.
//
// A phone opens https://<id>.<relay-domain>/. The relay reads only the TLS ClientHello's server name,
// finds the tunnel the runtime with that id dialed out, and splices the bytes through it without
// terminating TLS: the certificate, the cookies, the pages and the pairing secret exist only on the
// phone and in the runtime. The relay stores nothing but its own certificate cache; its tunnel table
// lives in memory.
//
// [Server] is the relay (`ensemble relay`); [Client] is the runtime's side, a net.Listener of phone
// connections that the runtime serves with its ordinary http.Server behind TLS.
package relay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The protocol, version 2.
//
// Login: the runtime opens TLS to <relay-domain>:443 and a WebSocket GET /v1/tunnel, read as one byte
// stream (websocket.NetConn). Frames are a type byte, a big-endian uint32 length and the payload,
// at most maxFrame bytes.
//
//	relay   → runtime  frameServerHello  version(1) | nonce(32)
//	runtime → relay    frameClientAuth   pub(32) | sig(64) | joinToken(0..64)
//	                   sig = Ed25519 over "ensemble-relay-v2\x00" + relayHost + "\x00" + nonce +
//	                   binding, where binding is 32 bytes of the TLS connection's exporter
//	                   (RFC 8446 §7.5, label exporterLabel) as each end computes it for itself.
//	                   The relay's name stops a login seen by one relay being replayed to another;
//	                   the binding stops one being passed through: a proxy that ends the runtime's
//	                   TLS (holding a certificate the runtime trusts for the relay's name) and
//	                   opens its own to the relay has two connections with two exporters, so the
//	                   signature the runtime made over the first does not verify on the second.
//	relay   → runtime  frameServerOK     id (26 characters)
//	               or  frameRefused      reason (one sentence), then the relay closes
//
// Steady state: the same byte stream carries a yamux session; the relay is the yamux client and opens
// one stream per phone TCP connection. Each stream starts with one frame:
//
//	frameConn    the phone's address "ip:port"; then the raw TLS bytes, from the ClientHello on
//	frameNotice  kind(1) | retryInMs(4) | detail: this tunnel was replaced by a newer one for the
//	             same id (noticeReplaced; detail is the source the newer one logged in from), or
//	             the relay is restarting (noticeRestarting); the tunnel closes
//
// Unknown frame types are skipped during login and close only their own stream after it, so the
// protocol can grow. yamux keeps the tunnel alive (15 s) and gives each phone its own window.
const (
	frameServerHello = 0x01
	frameClientAuth  = 0x02
	frameServerOK    = 0x03
	frameRefused     = 0x04
	frameConn        = 0x10
	frameNotice      = 0x11
)

const (
	protocolVersion = 2
	maxFrame        = 1 << 10
	nonceLen        = 32
	frameHeaderLen  = 5
	bindingLen      = 32
	exporterLabel   = "EXPORTER-ensemble-relay-login"
)

// Notice kinds.
const (
	noticeReplaced   = 1
	noticeRestarting = 2
)

// ErrFrameTooLarge is a frame whose length is over maxFrame; the connection is closed.
var ErrFrameTooLarge = errors.New("relay: frame too large")

// writeFrame writes one frame in a single Write, so a frame is never interleaved with another.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	if len(payload) > maxFrame {
		return ErrFrameTooLarge
	}
	b := make([]byte, frameHeaderLen+len(payload))
	b[0] = typ
	binary.BigEndian.PutUint32(b[1:5], uint32(len(payload)))
	copy(b[frameHeaderLen:], payload)
	_, err := w.Write(b)
	return err
}

// readFrameHeader reads a frame's type and length, refusing a length over maxFrame before any payload
// is read.
func readFrameHeader(r io.Reader) (typ byte, n uint32, err error) {
	var h [frameHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, 0, err
	}
	n = binary.BigEndian.Uint32(h[1:5])
	if n > maxFrame {
		return 0, 0, fmt.Errorf("readFrameHeader: %d bytes: %w", n, ErrFrameTooLarge)
	}
	return h[0], n, nil
}

// readFrame reads one whole frame.
func readFrame(r io.Reader) (typ byte, payload []byte, err error) {
	typ, n, err := readFrameHeader(r)
	if err != nil {
		return 0, nil, err
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, fmt.Errorf("readFrame: %w", err)
	}
	return typ, payload, nil
}

// readFrameOf reads frames until one of the wanted types, skipping unknown ones; a known type that
// is not wanted is a protocol error.
func readFrameOf(r io.Reader, want ...byte) (byte, []byte, error) {
	for {
		typ, p, err := readFrame(r)
		if err != nil {
			return 0, nil, err
		}
		for _, w := range want {
			if typ == w {
				return typ, p, nil
			}
		}
		if known(typ) {
			return 0, nil, fmt.Errorf("relay: unexpected frame 0x%02x", typ)
		}
	}
}

func known(typ byte) bool {
	switch typ {
	case frameServerHello, frameClientAuth, frameServerOK, frameRefused, frameConn, frameNotice:
		return true
	}
	return false
}

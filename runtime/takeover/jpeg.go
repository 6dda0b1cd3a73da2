package takeover

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// A browser's frame (spec 002 §8.16.2, §8.17) is a picture, so it does not go as JSON text like a
// terminal's: its plaintext (before [Channel.Seal]) is binary, which frontend/src/lib/browserframe.ts
// reads byte for byte:
//
//	byte 0       JPEGFrameTag (0x01): every other message is JSON and begins with '{'
//	bytes 1..4   n, the header's length in bytes, big-endian
//	n bytes      the header, UTF-8 JSON: {t: "frame", kind: "jpeg", seq, width, height, url, title, popup?, mode}
//	the rest     the JPEG, as Chromium's screencast made it
//
// url is the page's address without its query or fragment, so a sign-in's one-time values stay
// out of the header. Seq counts the frames of one view from 1, shared with nothing else; the page
// says which it has drawn with {t: "seen", seq}, as for a terminal.
const (
	JPEGFrameTag  = 0x01
	maxHeaderSize = 16 << 10
)

// JPEGHeader is a browser frame's header.
type JPEGHeader struct {
	T      string `json:"t"`    // frame
	Kind   string `json:"kind"` // jpeg
	Seq    int    `json:"seq"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Popup  bool   `json:"popup,omitempty"`
	Mode   string `json:"mode"` // watch, control
}

// ErrNotJPEGFrame is a plaintext that is not a browser frame.
var ErrNotJPEGFrame = errors.New("takeover: not a browser frame")

// EncodeJPEGFrame is the plaintext of a browser frame: the tag, the header's length, the header
// (its T and Kind filled in), and the JPEG.
func EncodeJPEGFrame(h JPEGHeader, jpeg []byte) []byte {
	h.T, h.Kind = "frame", "jpeg"
	head, _ := json.Marshal(h) // strings, numbers and a bool: it cannot fail
	out := make([]byte, 5, 5+len(head)+len(jpeg))
	out[0] = JPEGFrameTag
	binary.BigEndian.PutUint32(out[1:5], uint32(len(head)))
	out = append(out, head...)
	return append(out, jpeg...)
}

// DecodeJPEGFrame reads a browser frame's plaintext; the JPEG shares b's memory.
func DecodeJPEGFrame(b []byte) (JPEGHeader, []byte, error) {
	if len(b) < 5 || b[0] != JPEGFrameTag {
		return JPEGHeader{}, nil, ErrNotJPEGFrame
	}
	n := binary.BigEndian.Uint32(b[1:5])
	if n > maxHeaderSize || int(n) > len(b)-5 {
		return JPEGHeader{}, nil, fmt.Errorf("%w: a header of %d bytes in %d", ErrNotJPEGFrame, n, len(b))
	}
	var h JPEGHeader
	if err := json.Unmarshal(b[5:5+n], &h); err != nil || h.T != "frame" || h.Kind != "jpeg" {
		return JPEGHeader{}, nil, fmt.Errorf("%w: its header does not read", ErrNotJPEGFrame)
	}
	return h, b[5+n:], nil
}

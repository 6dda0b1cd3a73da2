package terminal

import "strings"

// keyBytes are what an xterm sends for each named key, as terminal_send names them; Up to Left
// and Home/End follow the program's cursor-key mode.
var keyBytes = map[string]string{
	"Enter": "\r", "Tab": "\t", "Escape": "\x1b", "Backspace": "\x7f", "Delete": "\x1b[3~",
	"PageUp": "\x1b[5~", "PageDown": "\x1b[6~", "Insert": "\x1b[2~",
	"F1": "\x1bOP", "F2": "\x1bOQ", "F3": "\x1bOR", "F4": "\x1bOS", "F5": "\x1b[15~", "F6": "\x1b[17~",
	"F7": "\x1b[18~", "F8": "\x1b[19~", "F9": "\x1b[20~", "F10": "\x1b[21~", "F11": "\x1b[23~", "F12": "\x1b[24~",
	"Ctrl+\\": "\x1c",
}

// cursorKeys end ESC [ X normally and ESC O X in application cursor mode.
var cursorKeys = map[string]byte{"Up": 'A', "Down": 'B', "Right": 'C', "Left": 'D', "Home": 'H', "End": 'F'}

// KeyBytes are the bytes a named key types ("Enter", "Up", "Ctrl+C", "F5"); appCursor is the
// program's application cursor mode ([Session.AppCursor]). A single character is itself.
func KeyBytes(name string, appCursor bool) ([]byte, bool) {
	if b, ok := keyBytes[name]; ok {
		return []byte(b), true
	}
	if c, ok := cursorKeys[name]; ok {
		if appCursor {
			return []byte{0x1b, 'O', c}, true
		}
		return []byte{0x1b, '[', c}, true
	}
	if rest, ok := strings.CutPrefix(name, "Ctrl+"); ok && len(rest) == 1 && rest[0] >= 'A' && rest[0] <= 'Z' {
		return []byte{rest[0] - 'A' + 1}, true
	}
	if len([]rune(name)) == 1 {
		return []byte(name), true
	}
	return nil, false
}

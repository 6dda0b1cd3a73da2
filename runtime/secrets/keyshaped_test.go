package secrets

import "testing"

func TestKeyShaped(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==", true},
		{"-----BEGIN PRIVATE KEY-----", true},
		{"aws AKIAIOSFODNN7EXAMPLE here", true},
		{"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstu", true},
		{"ghp_abcdefghijklmnopqrstuvwxyz0123456789", true},
		{"xoxb-1234567890-abcdef", true},
		{`"api_token": "0123456789abcdef0123456789abcdef"`, true},
		{"secret: QWxhZGRpbjpvcGVuIHNlc2FtZQQWxhZGRpbjpvcGVu==", true},
		{"-----BEGIN PUBLIC KEY-----", false},
		{"the key to success is 42", false},
		{"token: short", false},
		{"sk-short", false},
		{"a monthly bill of 42.00 EUR", false},
	} {
		if got := KeyShaped(c.text); got != c.want {
			t.Errorf("KeyShaped(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

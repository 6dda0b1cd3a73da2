package computer

import (
	"strings"
	"testing"
	"time"
)

func TestParseDeviceCode(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want DeviceCode
		ok   bool
	}{
		{"az login --use-device-code",
			"WARNING: To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code ABCD12345 to authenticate.\n",
			DeviceCode{URL: "https://microsoft.com/devicelogin", Code: "ABCD12345"}, true},
		{"az login in colour",
			"\x1b[93mTo sign in, use a web browser to open the page \x1b[1mhttps://microsoft.com/devicelogin\x1b[0m\x1b[93m and enter the code \x1b[1mFH3L6E8KP\x1b[0m to authenticate.\x1b[0m\r\n",
			DeviceCode{URL: "https://microsoft.com/devicelogin", Code: "FH3L6E8KP"}, true},
		{"gh auth login --web",
			"\x1b[0;33m!\x1b[0m First copy your one-time code: \x1b[1;39mABCD-1234\x1b[0m\nOpen this URL to continue in your web browser: https://github.com/login/device\n",
			DeviceCode{URL: "https://github.com/login/device", Code: "ABCD-1234"}, true},
		{"aws sso login",
			"Attempting to automatically open the SSO authorization page in your default browser.\nIf the browser does not open or you wish to use a different device to authorize this request, open the following URL:\n\nhttps://device.sso.us-east-1.amazonaws.com/\n\nThen enter the code:\n\nABCD-EFGH\n",
			DeviceCode{URL: "https://device.sso.us-east-1.amazonaws.com/", Code: "ABCD-EFGH"}, true},
		{"gcloud auth login --no-launch-browser",
			"Go to the following link in your browser:\n\n    https://accounts.google.com/o/oauth2/auth?response_type=code&client_id=32555940559.apps.googleusercontent.com&scope=openid\n\nEnter verification code: ",
			DeviceCode{URL: "https://accounts.google.com/o/oauth2/auth?response_type=code&client_id=32555940559.apps.googleusercontent.com&scope=openid"}, true},
		{"google device flow",
			"To authorize, visit https://www.google.com/device and enter the code: GQVQ-JKEC\nThe code expires in 30 minutes.\n",
			DeviceCode{URL: "https://www.google.com/device", Code: "GQVQ-JKEC"}, true},
		{"generic",
			"Please open https://auth.example.com/activate and enter the code WXYZ-9876 (expires in 600 seconds)\n",
			DeviceCode{URL: "https://auth.example.com/activate", Code: "WXYZ-9876", ExpiresIn: 10 * time.Minute}, true},
		{"a url alone", "See https://docs.example.com/cli for help.\n", DeviceCode{}, false},
		{"a code word without a code", "Enter the code shown on your screen\n", DeviceCode{}, false},
		{"a code far from its page",
			"Docs: https://docs.example.com/\n" + strings.Repeat("working\n", 20) + "one-time code: QQQQ-1234\n",
			DeviceCode{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseDeviceCode(tt.out)
			if ok != tt.ok || got != tt.want {
				t.Errorf("ParseDeviceCode = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
			// The same output cut into chunks anywhere gives the same code, once.
			for _, size := range []int{1, 3, 7, 16} {
				var s codeScanner
				var found []DeviceCode
				for i := 0; i < len(tt.out); i += size {
					if dc, ok := s.feed(tt.out[i:min(i+size, len(tt.out))]); ok {
						found = append(found, dc)
					}
				}
				if dc, ok := s.flush(); ok {
					found = append(found, dc)
				}
				if tt.ok && (len(found) != 1 || found[0] != tt.want) || !tt.ok && len(found) != 0 {
					t.Errorf("in chunks of %d: %+v; want %+v once", size, found, tt.want)
				}
			}
		})
	}
}

func TestSignInCommand(t *testing.T) {
	tests := []struct{ line, want string }{
		{"az login", "az login"},
		{"az login --use-device-code", "az login"},
		{"gh auth login --web -h github.com", "gh auth login"},
		{"gcloud auth login --no-launch-browser", "gcloud auth login"},
		{"cd infra && AWS_PROFILE=dev aws sso login --profile dev", "aws sso login"},
		{"npx vercel login", "vercel login"},
		{"/usr/local/bin/wandb login", "wandb login"},
		{"npm login", "npm login"},
		{"firebase login --no-localhost", "firebase login"},
		{"heroku login -i", "heroku login"},
		{"gh pr list", ""},
		{"az account show", ""},
		{"echo login", ""},
		{"git log", ""},
	}
	for _, tt := range tests {
		if got := SignInCommand(tt.line); got != tt.want {
			t.Errorf("SignInCommand(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

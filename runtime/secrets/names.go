package secrets

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind is what a secret is for.
type Kind string

const (
	// Provider is a model provider's API key, named "provider:<id>".
	Provider Kind = "provider"
	// Run is a secret runs use, named as an environment variable.
	Run Kind = "run"
)

// ProviderName is the secret name of a model provider's key ("anthropic" → "provider:anthropic").
func ProviderName(id string) string { return "provider:" + id }

var (
	envName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	providerName = regexp.MustCompile(`^provider:[a-z0-9][a-z0-9-]{0,39}$`)
)

// reservedNames would change how the computer, a shell, git or an agent runs or signs in if a run
// had them in its environment.
var reservedNames = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true, "OLDPWD": true,
	"TMPDIR": true, "TMP": true, "TEMP": true, "LANG": true, "TERM": true, "TZ": true, "IFS": true,
	"ENV": true, "BASH_ENV": true, "CDPATH": true, "PS4": true, "PROMPT_COMMAND": true,
	"EDITOR": true, "VISUAL": true, "PAGER": true, "BROWSER": true,
	"GITHUB_TOKEN": true, "GH_TOKEN": true, "GH_HOST": true, "GITLAB_TOKEN": true,
	"SSH_AUTH_SOCK": true, "SSH_ASKPASS": true, "GPG_AGENT_INFO": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "ALL_PROXY": true, "NO_PROXY": true,
	"http_proxy": true, "https_proxy": true, "all_proxy": true, "no_proxy": true,
	"NODE_OPTIONS": true, "NODE_PATH": true, "NODE_EXTRA_CA_CERTS": true, "PYTHONPATH": true,
	"PYTHONSTARTUP": true, "PERL5LIB": true, "PERL5OPT": true, "RUBYOPT": true, "RUBYLIB": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "REQUESTS_CA_BUNDLE": true, "CURL_CA_BUNDLE": true,
	"GOFLAGS": true, "GOPROXY": true, "CARGO_HOME": true, "RUSTUP_HOME": true,
	"GEMINI_API_KEY": true, "GOOGLE_API_KEY": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
	"COPILOT_GITHUB_TOKEN": true, "CURSOR_API_KEY": true,
}

// reservedPrefixes name families of such variables: the model providers' own keys and settings,
// Ensemble's, git's, the agents', the dynamic loader's, the locale's.
var reservedPrefixes = []string{
	"ANTHROPIC_", "OPENAI_", "ENSEMBLE_", "GIT_", "CLAUDE_", "CODEX_", "GEMINI_", "COPILOT_", "CURSOR_",
	"OPENCODE_", "AZURE_OPENAI_", "LD_", "DYLD_", "LC_", "XDG_", "NPM_CONFIG_", "npm_config_", "SUDO_",
	"BASH_FUNC_",
}

// NameProblem says in one sentence why name cannot be a secret of kind, or "" when it can.
//
// A run secret is an environment variable name (spec 002 §8.7.1, secretNameProblem): a run may get
// it as $NAME, so names that would change how the computer, git or an agent runs or signs in are
// refused.
func NameProblem(kind Kind, name string) string {
	switch kind {
	case Provider:
		if !providerName.MatchString(name) {
			return fmt.Sprintf("A provider key's name is provider:<id> (like provider:anthropic), not %q.", clip(name))
		}
		return ""
	case Run:
	default:
		return fmt.Sprintf("A secret's kind is provider or run, not %q.", clip(string(kind)))
	}
	switch {
	case name == "":
		return "A secret needs a name, written as an environment variable: letters, digits and _, like STRIPE_API_KEY."
	case len(name) > 128:
		return "A secret's name is at most 128 characters."
	case !envName.MatchString(name):
		return fmt.Sprintf("%q is not an environment variable name: use letters, digits and _, not starting with a digit (like STRIPE_API_KEY).", clip(name))
	case reservedNames[name] || reservedNames[strings.ToUpper(name)]:
		return fmt.Sprintf("%s is reserved: it would change how this computer, git or an agent runs or signs in; choose another name, like MY_%s.", name, strings.ToUpper(name))
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(strings.ToUpper(name), strings.ToUpper(p)) {
			return fmt.Sprintf("Names starting with %s are reserved: they would change how this computer, git or an agent runs or signs in; choose another name, like MY_%s.", strings.ToUpper(p), strings.ToUpper(name))
		}
	}
	return ""
}

// clip shortens what a person typed for quoting it back.
func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

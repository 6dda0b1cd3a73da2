package computer

import (
	"path/filepath"
	"strings"
	"time"
)

// SignInLimit is how long a command-line sign-in runs, in the background, whatever the node
// asked (spec 002 §8.16.4): long enough for its owner to see the card and sign in.
const SignInLimit = 15 * time.Minute

// signIns are the command-line sign-ins known by their program and subcommand words
// (SIGN_IN_COMMAND): the words after the program, flags left out, must start with one of these.
var signIns = map[string][][]string{
	"az":          {{"login"}},
	"gh":          {{"auth", "login"}, {"auth", "refresh"}},
	"gcloud":      {{"auth", "login"}, {"auth", "application-default", "login"}, {"init"}},
	"aws":         {{"sso", "login"}, {"login"}},
	"wandb":       {{"login"}},
	"npm":         {{"login"}, {"adduser"}},
	"pnpm":        {{"login"}},
	"yarn":        {{"npm", "login"}},
	"vercel":      {{"login"}},
	"firebase":    {{"login"}},
	"heroku":      {{"login"}},
	"netlify":     {{"login"}},
	"fly":         {{"auth", "login"}},
	"flyctl":      {{"auth", "login"}},
	"railway":     {{"login"}},
	"supabase":    {{"login"}},
	"wrangler":    {{"login"}},
	"doctl":       {{"auth", "init"}},
	"glab":        {{"auth", "login"}},
	"databricks":  {{"auth", "login"}},
	"huggingface": {{"login"}},
	"hf":          {{"auth", "login"}},
	"copilot":     {{"login"}},
	"claude":      {{"login"}},
	"codex":       {{"login"}},
	"gemini":      {{"login"}},
	"ngrok":       {{"login"}},
	"terraform":   {{"login"}},
	"oci":         {{"session", "authenticate"}},
	"stripe":      {{"login"}},
	"shopify":     {{"auth", "login"}},
	"expo":        {{"login"}},
	"eas":         {{"login"}},
	"tailscale":   {{"login"}},
	"cloudflared": {{"tunnel", "login"}},
	"sentry-cli":  {{"login"}},
	"pulumi":      {{"login"}},
	"atlas":       {{"auth", "login"}},
	"azd":         {{"auth", "login"}},
}

// runners are programs that run the next word as the program: npx vercel login, sudo az login.
var runners = map[string]bool{"npx": true, "pnpx": true, "bunx": true, "sudo": true, "env": true, "command": true, "exec": true, "time": true, "nohup": true}

// SignInCommand is which known sign-in a command line runs ("az login" for az login
// --use-device-code, "gh auth login"), or "". Each simple command of the line (split at ;, &&,
// || and |) is read: variable assignments and runners before the program are skipped, and the
// program's words after it, flags left out, are matched.
func SignInCommand(line string) string {
	for _, part := range splitCommands(line) {
		words := strings.Fields(part)
		for len(words) > 0 && (strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") || runners[words[0]] || strings.HasPrefix(words[0], "-")) {
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		prog := strings.TrimSuffix(filepath.Base(strings.Trim(words[0], `'"`)), ".exe")
		var subs []string
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") {
				subs = append(subs, strings.Trim(w, `'"`))
			}
		}
		for _, want := range signIns[prog] {
			if len(subs) >= len(want) && equalWords(subs[:len(want)], want) {
				return prog + " " + strings.Join(want, " ")
			}
		}
	}
	return ""
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// splitCommands cuts a line at the shell's command separators; quoting is not followed, which
// at worst takes a quoted "; az login" for a sign-in: a longer limit, nothing more.
func splitCommands(line string) []string {
	return strings.FieldsFunc(strings.NewReplacer("&&", ";", "||", ";", "|", ";", "\n", ";", "&", ";", "(", ";", ")", ";").Replace(line), func(r rune) bool { return r == ';' })
}

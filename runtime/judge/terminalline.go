package judge

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// A node's terminal (spec 002 §8.17) is a shell it types into, not a command it hands over whole,
// so its input is judged as the shell will read it: every line is judged whole before the Enter
// that submits it, together with what the terminal ran before (a variable, an alias, a function
// or a cd from an earlier send is known when a later line uses it).
//
// The judge keeps a model of the line being edited. Keys whose effect on that line cannot be known
// (Up and Down recall history the shell may have loaded or kept differently, Tab completes, Escape
// starts a readline command) make the line unknown, and an Enter on an unknown line is refused
// rather than guessed at: recalling a line and running it could run one the judge never saw (the
// owner's history, a line the owner typed). Typing fresh text on an unknown line first clears it
// (Ctrl+E Ctrl+U), so the line that runs is the one judged. While a full-screen program shows
// (less, vi, htop) keys go to it, not to the shell's line, so they are allowed; its lines are still
// judged, and afterwards the shell's line is unknown, as keys may have reached it after the
// program ended.
//
// Like the floor for commands it is a floor, not a sandbox: a program that runs commands itself
// (vi's :!, a Python prompt) is for the OS sandbox to contain.

// TermDecision is what the judge says about one send: [TermAllow], [TermRefuse] or [TermSudo].
type TermDecision uint8

// The three decisions. The zero TermDecision is TermRefuse, so a verdict nobody filled in fails
// closed.
const (
	TermRefuse TermDecision = iota // nothing is written
	TermAllow                      // the steps are written
	TermSudo                       // nothing is written: the line needs the administrator (computer_sudo)
)

func (d TermDecision) String() string {
	switch d {
	case TermAllow:
		return "allow"
	case TermSudo:
		return "sudo"
	}
	return "refuse"
}

// Limits on what a terminal's judge keeps.
const (
	// termContext is how many bytes of earlier commands a line is judged with; past it the
	// terminal takes no more lines (the judge would lose what they defined).
	termContext = 48 << 10
)

// TermInput is one send: text (a new line is Enter) and then named keys.
type TermInput struct {
	Text string
	Keys []string
}

// TermState is what the judge knows of a terminal between sends. The zero TermState is a fresh
// shell at its prompt.
type TermState struct {
	// Line is the line being edited, as far as it is known; Cursor is where in it (in runes).
	Line   string
	Cursor int
	// Unknown says Line is not known (after Up, Down, Tab, Escape or a full-screen program).
	Unknown bool
	// Pending are the lines of a command not complete yet (a trailing backslash, an open quote, a
	// here-document), already submitted: the shell runs nothing until the command is complete.
	Pending []string
	// Done are the complete commands submitted before, oldest first, that read as shell.
	Done []string
	// FullScreen says the terminal shows a full-screen program now; the caller sets it from the
	// screen before each send.
	FullScreen bool
}

// TermStep is one thing to type: Text (no control characters) or one named Key.
type TermStep struct {
	Text string `json:"text,omitempty"`
	Key  string `json:"key,omitempty"`
}

// TermVerdict is the judge's answer for one send.
type TermVerdict struct {
	Decision TermDecision
	// Reason is one sentence the node can act on, for a refusal or a sudo.
	Reason string
	// Line is the command refused or sent to computer_sudo.
	Line string
	// Steps are what to type, in order, when allowed.
	Steps []TermStep
	// State is the terminal's state once the steps are typed.
	State TermState
	// Cleared says an unknown line was cleared before the text.
	Cleared bool
}

// keyEffect is what a key does to the line model.
type keyEffect uint8

const (
	keyRefused keyEffect = iota
	keyEnter
	keyUnknown   // the line is no longer known
	keyKeep      // the line is unchanged
	keyInterrupt // Ctrl+C: the line and any pending command are dropped
	keyEOF       // Ctrl+D: end of input on an empty line, else delete the character
	keyLeft
	keyRight
	keyHome
	keyEnd
	keyBackspace
	keyDelete
	keyKillStart // Ctrl+U: kill from the cursor to the start
	keyKillEnd   // Ctrl+K: kill from the cursor to the end
)

// termKeys are the keys a node may send, by canonical name. Keys not here (Ctrl+O runs a line
// and fetches the next, Ctrl+X starts edit-and-execute, Ctrl+V inserts a control character,
// Ctrl+R searches history, Ctrl+Y yanks killed text, any Alt key runs a readline command) would
// run or insert a line unjudged and are never sent.
var termKeys = map[string]keyEffect{
	"Enter": keyEnter, "Tab": keyUnknown, "Escape": keyUnknown,
	"Up": keyUnknown, "Down": keyUnknown, "PageUp": keyUnknown, "PageDown": keyUnknown,
	"Ctrl+P": keyUnknown, "Ctrl+N": keyUnknown, "Ctrl+W": keyUnknown,
	"Left": keyLeft, "Right": keyRight, "Ctrl+B": keyLeft, "Ctrl+F": keyRight,
	"Home": keyHome, "End": keyEnd, "Ctrl+A": keyHome, "Ctrl+E": keyEnd,
	"Backspace": keyBackspace, "Ctrl+H": keyBackspace, "Delete": keyDelete,
	"Ctrl+U": keyKillStart, "Ctrl+K": keyKillEnd,
	"Ctrl+C": keyInterrupt, "Ctrl+D": keyEOF, "Ctrl+L": keyKeep, "Ctrl+Z": keyKeep, "Ctrl+\\": keyKeep,
	"F1": keyUnknown, "F2": keyUnknown, "F3": keyUnknown, "F4": keyUnknown, "F5": keyUnknown, "F6": keyUnknown,
	"F7": keyUnknown, "F8": keyUnknown, "F9": keyUnknown, "F10": keyUnknown, "F11": keyUnknown, "F12": keyUnknown,
}

// TermKeyName is a key's canonical name ("ctrl-c" → "Ctrl+C", "enter" → "Enter", "space" → " "),
// and whether the name reads as a key at all. A single printable character is itself.
func TermKeyName(k string) (string, bool) {
	k = strings.TrimSpace(strings.Trim(k, "{}"))
	if utf8.RuneCountInString(k) == 1 {
		r, _ := utf8.DecodeRuneInString(k)
		return k, unicode.IsPrint(r)
	}
	low := strings.ToLower(k)
	low = strings.NewReplacer("control", "ctrl", "-", "+", " ", "").Replace(low)
	if strings.HasPrefix(low, "c+") {
		low = "ctrl+" + low[2:]
	}
	if strings.HasPrefix(low, "m+") || strings.HasPrefix(low, "alt+") || strings.HasPrefix(low, "meta+") || strings.HasPrefix(low, "option+") {
		return "Alt+" + k[strings.IndexByte(strings.ReplaceAll(k, "-", "+"), '+')+1:], true
	}
	switch low {
	case "space":
		return " ", true
	case "return", "enter":
		return "Enter", true
	case "esc", "escape":
		return "Escape", true
	case "backspace", "bs":
		return "Backspace", true
	case "del", "delete":
		return "Delete", true
	case "pgup", "pageup":
		return "PageUp", true
	case "pgdn", "pagedown":
		return "PageDown", true
	case "up", "down", "left", "right", "home", "end", "tab":
		return strings.ToUpper(low[:1]) + low[1:], true
	}
	if rest, ok := strings.CutPrefix(low, "ctrl+"); ok && len(rest) == 1 {
		return "Ctrl+" + strings.ToUpper(rest), true
	}
	if len(low) >= 2 && low[0] == 'f' && strings.Trim(low[1:], "0123456789") == "" {
		return "F" + low[1:], true
	}
	return k, false
}

// JudgeTerminal judges one send to a node's terminal under the floor of s (s.Folder is the
// folder the shell started in). It is pure: what the terminal holds comes in st, and the state
// after the send comes back in the verdict.
func JudgeTerminal(in TermInput, st TermState, s Settings) TermVerdict {
	// A terminal asks nobody: what the owner's answers would decide follows the OS sandbox, so
	// only the floor, the zones and the never-programs refuse.
	s.Mode, s.Outside, s.Internet, s.Sandbox = ModeUnattended, OutsideReadWrite, true, true
	t := termJudge{s: s, st: st}
	t.st.Pending = append([]string(nil), st.Pending...)
	t.st.Done = append([]string(nil), st.Done...)
	refuse := func(reason string) TermVerdict { return TermVerdict{Decision: TermRefuse, Reason: reason, State: st} }

	if !utf8.ValidString(in.Text) {
		return refuse("The text is not valid UTF-8; send plain text.")
	}
	text := strings.ReplaceAll(in.Text, "\r\n", "\n")
	for _, r := range text {
		if r == '\n' {
			continue
		}
		if r == '\t' {
			return refuse("The text holds a tab, which the shell takes as completion; send the Tab key instead.")
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return refuse("The text holds a control character, which is not sent; send named keys (Enter, Ctrl+C …) instead.")
		}
	}
	if !st.FullScreen && st.Unknown && text != "" {
		t.steps = append(t.steps, TermStep{Key: "Ctrl+E"}, TermStep{Key: "Ctrl+U"})
		t.st.Line, t.st.Cursor, t.st.Unknown = "", 0, false
		t.cleared = true
	}
	for i, part := range strings.Split(text, "\n") {
		if i > 0 {
			if v, ok := t.key("Enter"); !ok {
				return v
			}
		}
		if part != "" {
			t.insert(part)
		}
	}
	for _, k := range in.Keys {
		name, ok := TermKeyName(k)
		if !ok {
			return refuse("`" + k + "` is not a key a terminal takes; name keys such as Enter, Tab, Up, Ctrl+C or q.")
		}
		if utf8.RuneCountInString(name) == 1 {
			t.insert(name)
			continue
		}
		if v, ok := t.key(name); !ok {
			return v
		}
	}
	if st.FullScreen && len(t.steps) > 0 {
		// Keys meant for the program may reach the shell once it ends.
		t.st.Line, t.st.Cursor, t.st.Unknown = "", 0, true
	}
	return TermVerdict{Decision: TermAllow, Steps: t.steps, State: t.st, Cleared: t.cleared}
}

type termJudge struct {
	s       Settings
	st      TermState
	steps   []TermStep
	cleared bool
	program string // what was typed to a full-screen program since its last Enter
}

// insert types text at the cursor.
func (t *termJudge) insert(text string) {
	if n := len(t.steps); n > 0 && t.steps[n-1].Key == "" {
		t.steps[n-1].Text += text
	} else {
		t.steps = append(t.steps, TermStep{Text: text})
	}
	if t.st.FullScreen {
		t.program += text
		return
	}
	if t.st.Unknown {
		return
	}
	r := []rune(t.st.Line)
	c := min(max(t.st.Cursor, 0), len(r))
	t.st.Line = string(r[:c]) + text + string(r[c:])
	t.st.Cursor = c + utf8.RuneCountInString(text)
}

// key applies one named key; false with the refusal when it may not be sent.
func (t *termJudge) key(name string) (TermVerdict, bool) {
	refuse := func(reason, line string) (TermVerdict, bool) {
		return TermVerdict{Decision: TermRefuse, Reason: reason, Line: line}, false
	}
	e, ok := termKeys[name]
	if !ok {
		return refuse("`"+name+"` is not sent: it would run or insert a line Ensemble cannot judge; type the whole line as text instead.", "")
	}
	st := &t.st
	r := []rune(st.Line)
	c := min(max(st.Cursor, 0), len(r))
	if st.FullScreen {
		// The program has the keys; a line it takes is judged as a line all the same.
		if e == keyEnter {
			// vi's :!cmd and the like: the command after the program's own prefix.
			if v, ok := t.judgeLine(strings.TrimLeft(t.program, ":!/? "), false); !ok {
				return v, false
			}
			t.program = ""
		}
		t.steps = append(t.steps, TermStep{Key: name})
		return TermVerdict{}, true
	}
	switch e {
	case keyEnter:
		if st.Unknown {
			return refuse("The line at the prompt is not known after Up, Down, Tab or Escape, so Enter is not sent; send Ctrl+C, then type the whole line.", "")
		}
		whole := strings.Join(append(append([]string(nil), st.Pending...), st.Line), "\n")
		if incomplete(whole) {
			if v, ok := t.judgeLine(whole, true); !ok {
				return v, false
			}
			st.Pending = append(st.Pending, st.Line)
		} else {
			if v, ok := t.judgeLine(whole, false); !ok {
				return v, false
			}
			if reads(whole) {
				st.Done = append(st.Done, whole)
			}
			st.Pending = nil
		}
		st.Line, st.Cursor = "", 0
	case keyUnknown:
		st.Unknown = true
	case keyInterrupt:
		st.Line, st.Cursor, st.Unknown, st.Pending = "", 0, false, nil
	case keyEOF:
		if len(r) == 0 && !st.Unknown && len(st.Pending) > 0 {
			return refuse("Ctrl+D would end the command being typed over several lines unjudged; finish it, or send Ctrl+C.", "")
		}
		if c < len(r) {
			st.Line = string(r[:c]) + string(r[c+1:])
		}
	case keyLeft:
		st.Cursor = max(c-1, 0)
	case keyRight:
		st.Cursor = min(c+1, len(r))
	case keyHome:
		st.Cursor = 0
	case keyEnd:
		st.Cursor = len(r)
	case keyBackspace:
		if c > 0 {
			st.Line, st.Cursor = string(r[:c-1])+string(r[c:]), c-1
		}
	case keyDelete:
		if c < len(r) {
			st.Line = string(r[:c]) + string(r[c+1:])
		}
	case keyKillStart:
		st.Line, st.Cursor = string(r[c:]), 0
	case keyKillEnd:
		st.Line = string(r[:c])
	}
	t.steps = append(t.steps, TermStep{Key: name})
	return TermVerdict{}, true
}

// judgeLine judges one command as the shell will run it: alone, and after the commands the
// terminal ran before. A command not complete yet is judged only for what the line itself shows
// (history expansion); the whole of it is judged when it is complete.
func (t *termJudge) judgeLine(line string, partial bool) (TermVerdict, bool) {
	refuse := func(d TermDecision, reason string) (TermVerdict, bool) {
		return TermVerdict{Decision: d, Reason: reason, Line: line}, false
	}
	for _, l := range strings.Split(line, "\n") {
		if why := historyExpansion(l); why != "" {
			return refuse(TermRefuse, why)
		}
	}
	if partial {
		return TermVerdict{}, true
	}
	if why := t.terminalCommand(line); why != "" {
		return refuse(TermRefuse, why)
	}
	context := strings.Join(t.st.Done, "\n")
	if len(context)+len(line) > termContext {
		return refuse(TermRefuse, "This terminal has run more than Ensemble can judge its next line with; close it and open a new one.")
	}
	calls := []string{line}
	if context != "" {
		calls = append(calls, context+"\n"+line)
	}
	for _, cmd := range calls {
		v := Decide(Call{Tool: ToolShell, Command: cmd, Cwd: t.s.Folder}, t.s)
		if d, why := termDecision(v); d != TermAllow {
			return refuse(d, why)
		}
	}
	return TermVerdict{}, true
}

// adminPrograms are the never-programs that run a command as the administrator: the command goes
// to computer_sudo, where the owner approves its exact text.
var adminPrograms = []string{"sudo", "doas", "pkexec", "run0", "sudoedit", "su"}

// AdminProgram reports whether a program runs a command as the administrator (sudo, doas, su…):
// such a command is a node's computer_sudo card, never its own command or terminal line.
func AdminProgram(p string) bool { return slices.Contains(adminPrograms, p) }

// termDecision reads the judge's verdict for a terminal: the floor, the zones and the
// never-programs refuse (a command for the administrator goes to computer_sudo), and so does a
// delete the judge cannot see, as nobody is there to ask; the rest follows the OS sandbox.
func termDecision(v Verdict) (TermDecision, string) {
	switch v.Decision {
	case Allow:
		return TermAllow, ""
	case Ask:
		if v.Rule == "unknown-delete" {
			return TermRefuse, strings.TrimSuffix(v.Reason, ", so it waits for your answer.") + "; in a terminal, name what it deletes plainly."
		}
		return TermAllow, ""
	}
	if v.Rule == "clone" {
		return TermAllow, "" // an agent's run has Ensemble clone for it; a terminal clones itself
	}
	if v.Rule == "never" {
		for _, p := range adminPrograms {
			if strings.HasPrefix(v.Reason, "`"+p+"` ") {
				return TermSudo, "This command needs the administrator: ask your owner with computer_sudo and the exact command, not in a terminal."
			}
		}
	}
	return TermRefuse, v.Reason
}

// terminalCommand refuses the commands that are harmless in a script but not at an interactive
// prompt: fc and history -s/-p run or add lines from history, bind makes a key type or run text,
// set -o vi makes typed text readline commands, set -H turns history expansion back on.
func (t *termJudge) terminalCommand(line string) string {
	r := readLine(&t.s, line, t.s.Folder)
	for _, c := range r.cmds {
		args := make([]string, 0, len(c.args))
		for _, a := range c.args {
			args = append(args, a.val)
		}
		switch c.prog {
		case "fc":
			return "`fc` runs lines from the shell's history, which Ensemble cannot judge; type the line itself."
		case "bind":
			return "`bind` makes keys type or run text Ensemble cannot judge, which a terminal of yours may not do."
		case "history":
			for _, a := range args[1:] {
				if strings.HasPrefix(a, "-") && strings.ContainsAny(a, "spnr") {
					return "`" + strings.Join(args, " ") + "` changes or expands the shell's history, which a terminal of yours may not do."
				}
			}
		case "set", "shopt":
			for i, a := range args[1:] {
				next := ""
				if i+2 < len(args) {
					next = args[i+2]
				}
				if (strings.HasPrefix(a, "-") && strings.Contains(a, "H")) || ((a == "-o" || a == "-s") && (next == "vi" || next == "histexpand" || next == "histverify" || next == "emacs")) {
					return "`" + strings.Join(args, " ") + "` changes how the shell reads typed lines, which a terminal of yours may not do."
				}
			}
		}
	}
	return ""
}

// historyExpansion says why a line would have the interactive shell expand history (!!, !n, !-n,
// !str, !$, !#, ^a^b), or "". It reads as bash does: ! is literal inside single quotes, after a
// backslash, before a blank, = or (, and in $! and ${!…}; it is expanded in double quotes.
func historyExpansion(line string) string {
	const why = "History expansion (!! and the like, or ^a^b) runs a line Ensemble cannot judge; type the whole command instead."
	if strings.HasPrefix(strings.TrimLeft(line, " \t"), "^") {
		return why
	}
	single, double := false, false
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case single:
			single = ch != '\''
		case ch == '\\':
			i++
		case ch == '\'' && !double:
			single = true
		case ch == '"':
			double = !double
		case ch == '!':
			if i+1 >= len(line) {
				continue
			}
			next := line[i+1]
			if next == ' ' || next == '\t' || next == '=' || next == '(' {
				continue
			}
			if i > 0 && line[i-1] == '$' || i > 1 && line[i-2:i] == "${" {
				continue
			}
			if double && next == '"' {
				continue // bash leaves a ! just before the closing quote
			}
			return why
		}
	}
	return ""
}

// incomplete reports a command the shell would wait for more of: a trailing backslash or &&, an
// open quote, a here-document without its end.
func incomplete(text string) bool {
	if strings.HasSuffix(text, "\\") && !strings.HasSuffix(text, "\\\\") {
		return true
	}
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	_, err := p.Parse(strings.NewReader(text+"\n"), "")
	if err != nil && syntax.IsIncomplete(err) {
		return true
	}
	// A here-document whose body has not ended yet parses; bash still waits for its word.
	return openHeredoc(text)
}

// openHeredoc reports a here-document whose end word has not come yet.
func openHeredoc(text string) bool {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		for _, w := range heredocWords(lines[i]) {
			found := false
			for i+1 < len(lines) {
				i++
				if strings.TrimLeft(lines[i], "\t") == w {
					found = true
					break
				}
			}
			if !found {
				return true
			}
		}
	}
	return false
}

// heredocWords are the end words of the here-documents a line starts (<<EOF, <<-'EOF', <<"E").
func heredocWords(line string) []string {
	var out []string
	for {
		i := strings.Index(line, "<<")
		if i < 0 {
			return out
		}
		line = line[i+2:]
		if strings.HasPrefix(line, "<") { // <<< is a here-string
			line = line[1:]
			continue
		}
		line = strings.TrimPrefix(line, "-")
		line = strings.TrimLeft(line, " \t")
		end := strings.IndexAny(line, " \t;|&<>()")
		if end < 0 {
			end = len(line)
		}
		w := strings.NewReplacer("'", "", "\"", "", "\\", "").Replace(line[:end])
		if w != "" {
			out = append(out, w)
		}
		line = line[end:]
	}
}

// reads reports a command that parses as shell, to judge later lines with.
func reads(text string) bool {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	_, err := p.Parse(strings.NewReader(text), "")
	return err == nil
}

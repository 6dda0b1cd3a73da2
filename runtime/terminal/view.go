package terminal

import (
	"context"
	"strings"
	"time"
)

// PromptMark is what a shell prints at each prompt to say it is back (the semantic-prompt
// sequence OSC 133;A that terminals use to find prompts). A node's shell puts it in PS1, so a
// program that reads the screen knows when a command has finished without guessing from
// silence. The emulator ignores it.
const PromptMark = "\x1b]133;A\x07"

// notedLocked counts the prompt marks in p and wakes whoever waits for output.
func (s *Session) notedLocked(p []byte) {
	joined := s.markTail + string(p)
	s.prompts += strings.Count(joined, PromptMark) - strings.Count(s.markTail, PromptMark)
	if n := len(PromptMark) - 1; len(joined) > n {
		s.markTail = joined[len(joined)-n:]
	} else {
		s.markTail = joined
	}
	if s.output != nil {
		close(s.output)
		s.output = nil
	}
}

// outputLocked is a channel closed at the next output, or at the end.
func (s *Session) outputLocked() <-chan struct{} {
	if s.ended {
		c := make(chan struct{})
		close(c)
		return c
	}
	if s.output == nil {
		s.output = make(chan struct{})
	}
	return s.output
}

// Prompts is how many prompt marks ([PromptMark]) the shell has printed.
func (s *Session) Prompts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prompts
}

// Settle waits until the output has been quiet for quiet, the shell has printed a prompt mark
// beyond prompts (when prompts ≥ 0) and then gone quiet, the session ends, or max passes. It
// reports whether the prompt came back.
func (s *Session) Settle(ctx context.Context, prompts int, quiet, max time.Duration) bool {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		back := prompts >= 0 && s.prompts > prompts
		out := s.outputLocked()
		ended := s.ended
		s.mu.Unlock()
		if ended {
			return back
		}
		wait := quiet
		if prompts >= 0 && !back {
			wait = max // only the prompt, or the time limit, ends the wait
		}
		q := time.NewTimer(wait)
		select {
		case <-out:
			q.Stop()
		case <-q.C:
			return back
		case <-deadline.C:
			q.Stop()
			return back
		case <-ctx.Done():
			q.Stop()
			return back
		}
	}
}

// AltScreen reports a full-screen program on the screen (less, vi, htop): its keys go to it, not
// to the shell's line.
func (s *Session) AltScreen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.IsAltScreen()
}

// AppCursor reports the program asked for application cursor keys (ESC O A for Up).
func (s *Session) AppCursor() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modes[1]
}

// Tail is the last n lines of the scrollback and the screen as plain text, trailing blanks and
// blank lines at the end trimmed; n ≤ 0 is the screen alone.
func (s *Session) Tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lines []string
	if n > 0 && !s.emu.IsAltScreen() {
		if sb := s.emu.Scrollback(); sb != nil {
			for _, l := range sb.Lines() {
				lines = append(lines, strings.TrimRight(l.String(), " "))
			}
		}
	}
	for _, l := range strings.Split(s.emu.String(), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

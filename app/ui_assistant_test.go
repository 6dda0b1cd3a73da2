package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestUIAssistantDock chats with the assistant in the dock, against the scripted model server
// speaking the Anthropic Messages API: the reply streams in, its tool call shows as a receipt with
// Undo, the tasks it made land on the board, the chat is in Recent chats, Stop ends a turn that
// hangs, Settings → Assistant shows the model and where the key comes from, and with no model the
// dock says where to choose one.
func TestUIAssistantDock(t *testing.T) {
	needUI(t)
	model := enginetest.NewServer(t)
	// The runtime reads the provider's key and address from the environment when none is saved.
	t.Setenv("ANTHROPIC_API_KEY", "test")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	t.Setenv("OPENAI_API_KEY", "")
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()

	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	setModel := func(name string, policy ...string) {
		t.Helper()
		wp := "immediate"
		if len(policy) > 0 {
			wp = policy[0]
		}
		err := c.do(ctx, "PUT", "/api/assistant/settings", map[string]any{"provider": "anthropic", "model": name, "writePolicy": wp}, nil)
		if err != nil {
			t.Fatalf("set the model: %v", err)
		}
	}
	setModel("claude-test")

	model.Script(
		enginetest.Say("On it.").Call("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Draft brief"}, {"title": "Call Mira"}}}).After(1500*time.Millisecond),
		enginetest.Say("Done: I added **Draft brief** and **Call Mira** to To do."),
	)

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	press(t, ctx, `#assistant-button`)
	waitShown(t, ctx, `#dock-input`)
	waitFor(t, ctx, "the composer has focus", `document.activeElement?.id === 'dock-input'`)
	typeInto(t, ctx, `#dock-input`, "Add two tasks: Draft brief and Call Mira\n")
	waitFor(t, ctx, "the question in the thread", `[...document.querySelectorAll('#dock-thread .msg.user')].some((m) => m.textContent.includes('Draft brief and Call Mira'))`)
	waitFor(t, ctx, "Thinking… while the model has said nothing", `!!document.querySelector('#dock-thread .thinking')`)
	waitFor(t, ctx, "Stop while the turn runs", `!!document.querySelector('#dock-stop') && document.querySelector('#dock-input').disabled`)
	waitFor(t, ctx, "the streamed reply", `document.querySelector('#dock-thread').textContent.includes('Done: I added')`)
	waitFor(t, ctx, "the turn ends", `!document.querySelector('#dock-stop') && !!document.querySelector('#dock-send')`)
	waitFor(t, ctx, "the tool row, done, with Undo", `(() => {
		const r = document.querySelector('#dock-thread .tool[data-status="done"]');
		return !!r && /Draft brief/.test(r.textContent) && !!r.querySelector('.tool-undo');
	})()`)
	waitFor(t, ctx, "the tasks on the board", `['Draft brief', 'Call Mira'].every((t) =>
		[...document.querySelectorAll('[data-status="todo"] [data-task-id] .card-title')].some((c) => c.textContent.trim() === t))`)
	waitFor(t, ctx, "bold rendered as markdown", `!!document.querySelector('#dock-thread .reply-text strong')`)
	screenshot(t, ctx, "assistant-dock-1280.png", 1280)
	screenshot(t, ctx, "assistant-dock-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Undo on the row takes the tasks off the board and marks the row; Redo brings them back.
	press(t, ctx, `#dock-thread .tool[data-status="done"] .tool-undo`)
	waitFor(t, ctx, "undone, or a sentence why not", `!!document.querySelector('#dock-thread .tool[data-undone] .mark') || !!document.querySelector('#dock-thread .tool-err')`)
	if msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#dock-thread .tool-err')?.textContent ?? ''`)); msg != "" {
		t.Fatalf("Undo from the dock: %s", msg)
	} else {
		waitFor(t, ctx, "the tasks leave the board", `![...document.querySelectorAll('[data-task-id] .card-title')].some((c) => c.textContent.trim() === 'Draft brief')`)
		press(t, ctx, `#dock-thread .tool[data-undone] .tool-undo`)
		waitFor(t, ctx, "redone", `!document.querySelector('#dock-thread .tool[data-undone]') && [...document.querySelectorAll('[data-task-id] .card-title')].some((c) => c.textContent.trim() === 'Draft brief')`)
	}

	// Recent chats lists this one.
	press(t, ctx, `#dock-recent`)
	waitFor(t, ctx, "the chat in Recent chats", `document.querySelectorAll('#dock-chats [data-chat]').length === 1`)
	screenshot(t, ctx, "assistant-recent-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#dock-chats .chat-open`)
	waitFor(t, ctx, "the chat opens again from the list", `document.querySelector('#dock-thread')?.textContent.includes('Done: I added')`)

	// Stop ends a turn the model never answers.
	model.Script(enginetest.Hang())
	typeInto(t, ctx, `#dock-input`, "And one more\n")
	// Stop once the model holds the turn: pressed earlier, the turn ends before it asks the model,
	// and the hanging step is left in the script for the next turn.
	if _, err := model.WaitForRequest(ctx, func(r *enginetest.Request) bool { return strings.Contains(r.LastUserText(), "And one more") }); err != nil {
		t.Fatalf("the model never got the turn to stop: %v", err)
	}
	press(t, ctx, `#dock-stop`)
	waitFor(t, ctx, "Stopped.", `[...document.querySelectorAll('#dock-thread .turn-error')].some((e) => e.textContent.trim() === 'Stopped.') && !!document.querySelector('#dock-send')`)

	// Under "Preview first" the writes wait in a dashed card for Apply (or Apply all).
	press(t, ctx, `#dock-new`)
	waitFor(t, ctx, "an empty thread", `!document.querySelector('#dock-thread .msg')`)
	setModel("claude-test", "preview")
	model.Script(
		enginetest.Step{}.Call("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Plan the trip"}}}).
			Call("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Book a hotel"}}}),
		enginetest.Say("Both are ready for you to apply."),
	)
	typeInto(t, ctx, `#dock-input`, "Plan the trip and book a hotel\n")
	waitFor(t, ctx, "the turn ends", `document.querySelector('#dock-thread').textContent.includes('ready for you to apply') && !!document.querySelector('#dock-send')`)
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#dock-thread .proposals .prop-apply').length`)); n != 2 {
		t.Fatalf("%d proposals to apply, want 2", n)
	} else {
		waitFor(t, ctx, "Apply all", `!!document.querySelector('#dock-thread .proposals .prop-apply-all')`)
		screenshot(t, ctx, "assistant-proposals-1280.png", 1280)
		press(t, ctx, `#dock-thread .prop-apply-all`)
		waitFor(t, ctx, "applied, or a sentence why not", `document.querySelectorAll('#dock-thread .mark[data-mark="applied"]').length === 2 || !!document.querySelector('#dock-thread .tool-err')`)
		if msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#dock-thread .tool-err')?.textContent ?? ''`)); msg != "" {
			t.Fatalf("Apply all: %s", msg)
		} else {
			waitFor(t, ctx, "the applied tasks on the board", `['Plan the trip', 'Book a hotel'].every((t) =>
				[...document.querySelectorAll('[data-task-id] .card-title')].some((c) => c.textContent.trim() === t))`)
			screenshot(t, ctx, "assistant-applied-1280.png", 1280)
		}
	}
	setModel("claude-test")

	// Delete the first chat from Recent chats (after a confirm).
	press(t, ctx, `#dock-recent`)
	waitFor(t, ctx, "the chats listed", `document.querySelectorAll('#dock-chats [data-chat]').length === 2`)
	press(t, ctx, `#dock-chats li:last-child .chat-delete`)
	press(t, ctx, `#dock-chats .chat-delete-yes`)
	waitFor(t, ctx, "the chat deleted", `document.querySelectorAll('#dock-chats [data-chat]').length === 1 && !document.querySelector('#dock-chats').textContent.includes('Add two tasks')`)

	// Settings → Assistant: the model set above, and the key read from the environment.
	press(t, ctx, `#dock-close`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/settings/assistant")); err != nil {
		t.Fatalf("Settings → Assistant: %v", err)
	}
	waitShown(t, ctx, `#assistant-form`)
	waitFor(t, ctx, "the model", `document.querySelector('#as-model').value === 'claude-test'`)
	waitFor(t, ctx, "three write policies", `document.querySelectorAll('#as-writePolicy input[type=radio]').length === 3 && document.querySelector('#as-writePolicy input[value=immediate]').checked`)
	waitFor(t, ctx, "the key state", `document.querySelector('#providers-list [data-provider="anthropic"] .key-state')?.textContent.trim() === 'From environment'`)
	// A base URL is asked for OpenAI-compatible servers and Ollama only.
	waitFor(t, ctx, "no base URL for Anthropic", `!document.querySelector('#as-baseUrl')`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('#as-provider'); s.value = 'ollama'; s.dispatchEvent(new Event('change', { bubbles: true })); return true })()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a base URL for Ollama", `!!document.querySelector('#as-baseUrl') && !document.querySelector('#assistant-save').disabled`)
	if err := setInput(ctx, "#as-baseUrl", "not a url"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#assistant-save`)
	waitFor(t, ctx, "a bad base URL refused in one sentence", `document.querySelector('#assistant-settings .set-error')?.textContent.includes('http://')`)
	screenshot(t, ctx, "settings-assistant-1280.png", 1280)
	top := `(document.querySelector('#assistant-settings').scrollIntoView({block: 'start'}), true)`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](top)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "settings-assistant-390.png", 390)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('#providers-settings').scrollIntoView({block: 'start'}), true)`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "settings-providers-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// With no model, the dock says where to choose one instead of offering a composer that fails.
	setModel("")
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.dispatchEvent(new KeyboardEvent('keydown', { key: 'j', ctrlKey: true, bubbles: true })), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the no-model notice (opened with Ctrl+J)", `document.querySelector('#dock-no-model a')?.getAttribute('href') === '#/settings/assistant' && !document.querySelector('#dock-input')`)
}

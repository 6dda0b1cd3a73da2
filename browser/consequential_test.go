package browser

import "testing"

func TestConsequential(t *testing.T) {
	for _, tc := range []struct{ name, word string }{
		{"Place order", "order"}, {"Pay now", "pay"}, {"Check out", "check out"}, {"Delete account", "delete"},
		{"Send", "send"}, {"Details", ""}, {"Orders history", ""}, {"Sender", ""}, {"PUBLISH", "publish"},
	} {
		if got := Consequential(tc.name); got != tc.word {
			t.Errorf("Consequential(%q) = %q, want %q", tc.name, got, tc.word)
		}
	}
}

func TestAskedFor(t *testing.T) {
	for _, tc := range []struct {
		said, word string
		want       bool
	}{
		{"please order the kettle", "order", true},
		{"buy it", "order", true},
		{"check out the cart", "check out", true},
		{"I deleted it, delete the rest", "delete", true},
		{"look at my cart", "order", false},
		{"reorder the list", "order", false},
		{"send it when ready", "send", true},
	} {
		if got := AskedFor(tc.said, tc.word); got != tc.want {
			t.Errorf("AskedFor(%q, %q) = %v, want %v", tc.said, tc.word, got, tc.want)
		}
	}
}

func TestRefName(t *testing.T) {
	text := "- heading \"Cart\"\n- button \"Say \\\"hi\\\"\" [ref=e1]\n- link \"Details\" [ref=e12]\n- textbox [ref=e2]"
	for ref, want := range map[string]string{"e1": `Say "hi"`, "e12": "Details", "e2": "- textbox [ref=e2]", "e3": ""} {
		if got := RefName(text, ref); got != want {
			t.Errorf("RefName(%s) = %q, want %q", ref, got, want)
		}
	}
}

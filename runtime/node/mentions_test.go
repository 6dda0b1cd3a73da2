package node

import (
	"slices"
	"testing"
)

func TestMentions(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"none", "hello there", nil},
		{"one", "@dev please look", []string{"dev"}},
		{"lowercased", "hi @Dev", []string{"dev"}},
		{"in order without duplicates", "@tester then @dev and @tester again", []string{"tester", "dev"}},
		{"dup by case", "@Dev @dev", []string{"dev"}},
		{"trailing punctuation", "thanks @dev, @tester. @writer! (@designer) @ops?", []string{"dev", "tester", "writer", "designer", "ops"}},
		{"hyphen and underscore inside", "@research-writer and @data_bot", []string{"research-writer", "data_bot"}},
		{"trailing hyphen dropped", "@dev- and @qa_", []string{"dev", "qa"}},
		{"email is not a mention", "mail ana@example.com or bo.x+y@b.c", nil},
		{"email and mention", "write to a@b.c, @dev", []string{"dev"}},
		{"after newline", "line\n@dev", []string{"dev"}},
		{"after colon", "cc:@dev", []string{"dev"}},
		{"bare at", "meet @ 5, @ or @-", nil},
		{"possessive", "@dev's branch", []string{"dev"}},
		{"everyone", "@everyone stand up", []string{"everyone"}},
		{"unicode letter before", "é@dev", nil},
		{"unicode after", "@devé", []string{"dev"}},
		{"double at", "@@dev", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Mentions(c.body); !slices.Equal(got, c.want) {
				t.Errorf("Mentions(%q) = %q, want %q", c.body, got, c.want)
			}
		})
	}
}

func TestValidHandle(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{"dev", true},
		{"research-writer", true},
		{"data_bot", true},
		{"assistant-2", true},
		{"9lives", true},
		{"a", true},
		{"abcdefghijabcdefghijabcdefghij12", true},
		{"abcdefghijabcdefghijabcdefghij123", false},
		{"", false},
		{"Dev", false},
		{"-dev", false},
		{"dev-", false},
		{"_dev", false},
		{"de v", false},
		{"dév", false},
		{"@dev", false},
		{"dev.ops", false},
	}
	for _, c := range cases {
		if got := ValidHandle(c.in); got != c.want {
			t.Errorf("ValidHandle(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestReservedHandle(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{"everyone", true},
		{"nodes", true},
		{"Everyone", true},
		{"node", false},
		{"dev", false},
		{"", false},
	}
	for _, c := range cases {
		if got := ReservedHandle(c.in); got != c.want {
			t.Errorf("ReservedHandle(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSlugify(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"Assistant", "assistant"},
		{"Research Writer", "research-writer"},
		{"  Ops -- Bot!! ", "ops-bot"},
		{"Data_Analyst 2", "data-analyst-2"},
		{"Zoë", "zo"},
		{"!!!", ""},
		{"日本", ""},
		{"a very long name that goes well past the limit", "a-very-long-name-that-goes-well"},
		{"abcdefghijabcdefghijabcdefghij-x", "abcdefghijabcdefghijabcdefghij-x"},
		{"abcdefghijabcdefghijabcdefghijab cd", "abcdefghijabcdefghijabcdefghijab"},
		{"abcdefghijabcdefghijabcdefghij1 cd", "abcdefghijabcdefghijabcdefghij1"},
	}
	for _, c := range cases {
		got := Slugify(c.in)
		if got != c.want {
			t.Errorf("Slugify(%q) = %q, want %q", c.in, got, c.want)
		}
		if got != "" && !ValidHandle(got) {
			t.Errorf("Slugify(%q) = %q, which is not a valid handle", c.in, got)
		}
	}
}

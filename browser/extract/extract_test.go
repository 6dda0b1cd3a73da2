package extract

import (
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestPage(t *testing.T) {
	tests := []struct {
		file     string
		title    string
		has      []string // in the Markdown
		hasNot   []string
		tables   []Table
		products []Product
	}{
		{
			file:  "shop_jsonld.html",
			title: "Trail Mug – Camp Goods",
			has:   []string{"double-walled steel mug"},
			products: []Product{
				{Name: "Trail Mug 12oz", Price: "$19.99", Amount: "19.99", Currency: "USD", URL: "https://shop.example/p/trail-mug", Availability: "InStock", Source: "json-ld"},
				{Name: "Camp Stove", Price: "$49–$79.50", Amount: "49", Currency: "USD", Source: "json-ld"},
				{Name: "Titanium Spork", Price: "€7.5", Amount: "7.5", Currency: "EUR", URL: "https://shop.example/p/spork", Source: "json-ld"},
			},
		},
		{
			file: "shop_microdata.html",
			products: []Product{
				{Name: "Gooseneck Kettle", Price: "1.299,00 €", Amount: "1299.00", Currency: "EUR", URL: "https://shop.example/kettle", Availability: "OutOfStock", Source: "microdata"},
				{Name: "Filter Papers", Price: "£5", Amount: "5", Currency: "GBP", Source: "microdata"},
			},
		},
		{
			file:   "shop_plain.html",
			hasNot: []string{"var price"},
			products: []Product{
				{Name: "Blue Backpack", Price: "$49.99", Amount: "49.99", Currency: "USD", URL: "https://shop.example/item/1", Source: "page"},
				{Name: "Rain Jacket", Price: "89,95 €", Amount: "89.95", Currency: "EUR", Source: "page"},
				{Name: "Wool Socks", Price: "£5", Amount: "5", Currency: "GBP", Source: "page"},
				{Name: "Head Torch", Price: "USD 12.00", Amount: "12.00", Currency: "USD", Source: "page"},
			},
		},
		{
			file:  "data_table.html",
			title: "Ferry timetable",
			has:   []string{"| Route ", "| Harbor → Island ", "|---"},
			tables: []Table{{
				Caption: "Summer timetable",
				Header:  []string{"Route", "Departs", "Arrives", "Fare"},
				Rows: [][]string{
					{"Harbor → Island", "08:00", "08:45", "$4.50"},
					{"Island → Harbor", "09:00", "09:45", "$4.50"},
					{"No ferry on Sundays", "", "", "—"},
				},
			}},
		},
		{
			file:   "table_main.html",
			has:    []string{"exchange rates the bank uses", "| Currency | Buy ", "| JPY "},
			hasNot: []string{"[Home]", "Privacy"},
			tables: []Table{{Rows: [][]string{{"Currency", "Buy", "Sell"}, {"EUR", "1.08", "1.12"}, {"GBP", "1.26", "1.31"}, {"JPY", "0.0066", "0.0069"}}}},
		},
		{
			file:   "article.html",
			title:  "How tides work | Sea Notes",
			has:    []string{"spring tides", "Bay of Fundy", "## Tide heights this week", "| Monday "},
			hasNot: []string{"cheap flights", "Cookie settings", "[News]"},
			tables: []Table{{Header: []string{"Day", "High (m)", "Low (m)"}, Rows: [][]string{{"Monday", "4.2", "0.6"}, {"Tuesday", "4.0", "0.8"}}}},
		},
	}
	u, _ := url.Parse("https://shop.example/x/page")
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			doc, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Page(doc, u)
			if err != nil {
				t.Fatalf("Page: %v", err)
			}
			if tt.title != "" && r.Title != tt.title {
				t.Errorf("title %q, want %q", r.Title, tt.title)
			}
			for _, s := range tt.has {
				if !strings.Contains(r.Markdown, s) {
					t.Errorf("markdown lacks %q:\n%s", s, r.Markdown)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(r.Markdown, s) {
					t.Errorf("markdown has %q:\n%s", s, r.Markdown)
				}
			}
			if !reflect.DeepEqual(r.Tables, tt.tables) {
				t.Errorf("tables\n got %q\nwant %q", r.Tables, tt.tables)
			}
			if !reflect.DeepEqual(r.Products, tt.products) {
				t.Errorf("products\n got %+v\nwant %+v", r.Products, tt.products)
			}
			// Whatever readability kept, no data table is lost from the Markdown.
			for _, tb := range r.Tables {
				if cell := tb.Rows[len(tb.Rows)-1][0]; !strings.Contains(r.Markdown, cell) {
					t.Errorf("markdown lost the table row %q", cell)
				}
			}
		})
	}
}

func TestTableBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><body>")
	for i := 0; i < 25; i++ {
		b.WriteString("<table><tr><th>a</th><th>b</th></tr>")
		for j := 0; j < 250; j++ {
			b.WriteString("<tr><td>x</td><td colspan=\"99\">y</td></tr>")
		}
		b.WriteString("</table>")
	}
	u, _ := url.Parse("https://example.com/")
	r, err := Page([]byte(b.String()), u)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tables) != maxTables {
		t.Fatalf("%d tables, want %d", len(r.Tables), maxTables)
	}
	if n := len(r.Tables[0].Rows); n != maxRows {
		t.Errorf("%d rows, want %d", n, maxRows)
	}
	if n := len(r.Tables[0].Rows[0]); n != 1+maxColspan {
		t.Errorf("a colspan=99 row has %d cells, want %d", n, 1+maxColspan)
	}
}

func TestParsePrice(t *testing.T) {
	tests := []struct {
		in                      string
		shown, amount, currency string
		ok                      bool
	}{
		{"$19.99", "$19.99", "19.99", "USD", true},
		{"Now only $ 1,299.00!", "$ 1,299.00", "1299.00", "USD", true},
		{"19,99 €", "19,99 €", "19.99", "EUR", true},
		{"1.299,00\u00a0€", "1.299,00 €", "1299.00", "EUR", true},
		{"£5", "£5", "5", "GBP", true},
		{"USD 12.00", "USD 12.00", "12.00", "USD", true},
		{"12,00 EUR incl. VAT", "12,00 EUR", "12.00", "EUR", true},
		{"CHF 1'000", "CHF 1", "1", "CHF", true},
		{"US$7", "US$7", "7", "USD", true},
		{"¥1,500", "¥1,500", "1500", "JPY", true},
		{"1299.00 usd", "1299.00 usd", "1299.00", "USD", true},
		{"Ask us", "", "", "", false},
		{"in 5 days", "", "", "", false},
		{"thousand 12", "", "", "", false},
	}
	for _, tt := range tests {
		shown, amount, cur, ok := ParsePrice(tt.in)
		if shown != tt.shown || amount != tt.amount || cur != tt.currency || ok != tt.ok {
			t.Errorf("ParsePrice(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tt.in, shown, amount, cur, ok, tt.shown, tt.amount, tt.currency, tt.ok)
		}
	}
}

func TestText(t *testing.T) {
	if got := Text([]byte("a\r\n\r\n\r\n\r\nb\n")).Markdown; got != "a\n\nb" {
		t.Errorf("Text = %q", got)
	}
}

package extract

import (
	"regexp"
	"strings"
)

// symbols are the currency signs a price is written with, longest first where one holds another.
var symbols = []struct{ sign, code string }{
	{"US$", "USD"}, {"CA$", "CAD"}, {"C$", "CAD"}, {"AU$", "AUD"}, {"A$", "AUD"}, {"NZ$", "NZD"},
	{"HK$", "HKD"}, {"R$", "BRL"}, {"$", "USD"}, {"€", "EUR"}, {"£", "GBP"}, {"¥", "JPY"},
	{"₹", "INR"}, {"₩", "KRW"}, {"₽", "RUB"}, {"₺", "TRY"}, {"₪", "ILS"}, {"zł", "PLN"},
}

// codes are the ISO 4217 codes a price is often written with ("USD 12.00", "12,00 EUR").
const codes = `USD|EUR|GBP|JPY|CAD|AUD|NZD|CHF|CNY|INR|SEK|NOK|DKK|PLN|CZK|HUF|BRL|MXN|KRW|SGD|HKD|ZAR|TRY|ILS|RUB`

var (
	// A thousands separator is a dot, a comma or a no-break space, never a plain space, so "$5 100
	// items" is five dollars.
	number = `(\d{1,3}(?:[.,\x{00a0}\x{202f}]\d{3})*(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)`
	signs  = func() string {
		var q []string
		for _, s := range symbols {
			q = append(q, regexp.QuoteMeta(s.sign))
		}
		return strings.Join(q, "|")
	}()
	// Longest: "1299.00" is one number, not "129" and the rest.
	priceBefore = longest(`(?i)(` + signs + `|\b(?:` + codes + `)\b)[\s\x{00a0}]?` + number)
	priceAfter  = longest(`(?i)` + number + `[\s\x{00a0}]?(` + signs + `|\b(?:` + codes + `)\b)`)
	nbsp        = strings.NewReplacer("\u00a0", " ", "\u202f", " ")
)

func longest(expr string) *regexp.Regexp {
	re := regexp.MustCompile(expr)
	re.Longest()
	return re
}

// ParsePrice finds the first price in s: "$19.99", "19,99 €", "£5", "USD 12.00", "1.299,00 EUR".
// It answers the price as written, its amount with a dot for decimals and no thousands
// separators ("1299.00"), and its ISO currency code.
func ParsePrice(s string) (shown, amount, currency string, ok bool) {
	best := -1
	if m := priceBefore.FindStringSubmatchIndex(s); m != nil {
		best = m[0]
		shown, currency, amount = s[m[0]:m[1]], s[m[2]:m[3]], s[m[4]:m[5]]
	}
	if m := priceAfter.FindStringSubmatchIndex(s); m != nil && (best < 0 || m[0] < best) {
		shown, amount, currency = s[m[0]:m[1]], s[m[2]:m[3]], s[m[4]:m[5]]
		best = m[0]
	}
	if best < 0 {
		return "", "", "", false
	}
	amount = normalAmount(amount)
	if amount == "" {
		return "", "", "", false
	}
	return strings.TrimSpace(nbsp.Replace(shown)), amount, currencyCode(currency), true
}

// currencyCode is the ISO code of a sign or code as written.
func currencyCode(c string) string {
	c = strings.TrimSpace(c)
	for _, s := range symbols {
		if strings.EqualFold(c, s.sign) {
			return s.code
		}
	}
	return strings.ToUpper(c)
}

// normalAmount writes a number as "1299.00": the last separator followed by one or two digits is
// the decimal point ("19,99", "1.299,00"); any other separator groups thousands ("1,299").
func normalAmount(n string) string {
	n = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\u00a0', '\u202f':
			return -1
		}
		return r
	}, strings.TrimSpace(n))
	i := strings.LastIndexAny(n, ".,")
	if i >= 0 && len(n)-i-1 <= 2 {
		whole := strings.NewReplacer(".", "", ",", "").Replace(n[:i])
		return whole + "." + n[i+1:]
	}
	return strings.NewReplacer(".", "", ",", "").Replace(n)
}

// usualSign is the sign a shop writes before an amount in these currencies; others are written
// with their code ("CHF 12.00").
var usualSign = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹"}

// showPrice writes an amount and code as a shop would ("$19.99", "€5.00", "CHF 12.00").
func showPrice(amount, code string) string {
	switch {
	case amount == "":
		return ""
	case usualSign[code] != "":
		return usualSign[code] + amount
	case code == "":
		return amount
	}
	return code + " " + amount
}

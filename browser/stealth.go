package browser

import (
	"context"
	"os"
	"runtime"
	"strings"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// language is the computer's language as a browser names it: LANG=de_DE.UTF-8 → de-DE.
func language() string {
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if l := langTag(os.Getenv(v)); l != "" {
			return l
		}
	}
	return "en-US"
}

func langTag(s string) string {
	s, _, _ = strings.Cut(s, ".")
	s, _, _ = strings.Cut(s, "@")
	if s == "" || s == "C" || s == "POSIX" {
		return ""
	}
	return strings.ReplaceAll(s, "_", "-")
}

// acceptLanguage is the header an ordinary Chrome in that language sends.
func acceptLanguage(tag string) string {
	base, _, _ := strings.Cut(tag, "-")
	if base == tag {
		return tag
	}
	return tag + "," + base + ";q=0.9"
}

// timeZone is the computer's IANA time zone, or "" to leave Chromium's own.
func timeZone() string {
	if tz := os.Getenv("TZ"); tz != "" && !strings.HasPrefix(tz, ":") {
		return tz
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		if tz := strings.TrimSpace(string(b)); tz != "" {
			return tz
		}
	}
	if l, err := os.Readlink("/etc/localtime"); err == nil {
		if _, tz, ok := strings.Cut(l, "zoneinfo/"); ok {
			return tz
		}
	}
	return ""
}

// uaPlatform is navigator.platform and the client hints' platform for this computer.
func uaPlatform() (nav, hint string) {
	switch runtime.GOOS {
	case "darwin":
		return "MacIntel", "macOS"
	case "windows":
		return "Win32", "Windows"
	default:
		return "Linux x86_64", "Linux"
	}
}

// brandsOf makes the Sec-CH-UA brands of an ordinary Chrome from "Chrome/156.0.1.2".
func brandsOf(product string) (major, full string) {
	_, full, _ = strings.Cut(product, "/")
	major, _, _ = strings.Cut(full, ".")
	return major, full
}

// presentAsChrome makes a target's page see an ordinary Chrome: its user agent without
// HeadlessChrome, the computer's language and time zone.
func presentAsChrome(ctx context.Context, p *proc) error {
	if p.ua == "" {
		return nil
	}
	lang := language()
	nav, hint := uaPlatform()
	major, full := brandsOf(p.product)
	meta := &emulation.UserAgentMetadata{
		Brands: []*emulation.UserAgentBrandVersion{
			{Brand: "Chromium", Version: major}, {Brand: "Google Chrome", Version: major}, {Brand: "Not?A_Brand", Version: "99"},
		},
		FullVersionList: []*emulation.UserAgentBrandVersion{
			{Brand: "Chromium", Version: full}, {Brand: "Google Chrome", Version: full}, {Brand: "Not?A_Brand", Version: "99.0.0.0"},
		},
		Platform: hint, Architecture: "x86", Bitness: "64",
	}
	if _, err := chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
		UserAgent: p.ua, AcceptLanguage: acceptLanguage(lang), Platform: nav, UserAgentMetadata: meta,
	}); err != nil {
		return err
	}
	if tz := timeZone(); tz != "" {
		_, _ = chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: tz})
	}
	return nil
}

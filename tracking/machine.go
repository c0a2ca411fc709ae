package tracking

import (
	"net/http"
	"strings"
)

// What the request alone says is automated (docs/api.md "Engagement
// tracking"): an open or a click that a machine made, not a reader, is
// still counted but marked machine, so that a sender can leave it out.
// A click within mailroom.ClickScanWindow of delivery is machine too; the
// store applies that (mailroom.NewEngagementEvent), since the request
// cannot tell.

// Agent is one User-Agent that marks a request as a machine's: Match is
// found in the User-Agent, ignoring case; What says whose it is, for the
// docs.
type Agent struct {
	Match string
	What  string
}

// MachineAgents are the agents of mailbox image proxies, which fetch every
// image of a message as it arrives or on the reader's behalf (so an open
// through them says little about a reader), and of link scanners and bots,
// which follow links to check them. The docs list them (docs/api.md
// "Engagement tracking"). Apple Mail Privacy Protection's proxy sends the
// bare "Mozilla/5.0", which is matched exactly (bareMozilla), as no
// browser sends it. A generic "bot", "crawler" or "spider" (bareWords)
// catches the rest that announce themselves.
var MachineAgents = []Agent{
	// Mailbox image proxies (opens).
	{"GoogleImageProxy", "Gmail's image proxy"},
	{"ggpht.com", "Gmail's image proxy"},
	{"YahooMailProxy", "Yahoo Mail's image proxy"},
	{"Microsoft Office Existence Discovery", "Microsoft Office's link and image checks"},
	{"Microsoft Office Protocol Discovery", "Microsoft Office's link and image checks"},
	{"ms-office", "Microsoft Office's link and image checks"},
	// Link scanners of mail filters (clicks).
	{"BingPreview", "Microsoft Defender Safe Links and Bing previews"},
	{"Safe Links", "Microsoft Defender Safe Links"},
	{"Barracuda", "Barracuda"},
	{"Mimecast", "Mimecast"},
	{"Proofpoint", "Proofpoint"},
	{"Symantec", "Symantec"},
	{"IronPort", "Cisco IronPort"},
	{"Cisco", "Cisco"},
	{"Trend Micro", "Trend Micro"},
	{"TrendMicro", "Trend Micro"},
	{"Sophos", "Sophos"},
	{"FireEye", "FireEye"},
	{"Forcepoint", "Forcepoint"},
	{"Websense", "Forcepoint (Websense)"},
	// HTTP libraries and tools: a reader's browser is none of them.
	{"curl/", "curl"},
	{"Wget", "GNU Wget"},
	{"python-requests", "Python requests"},
	{"python-urllib", "Python urllib"},
	{"aiohttp", "Python aiohttp"},
	{"Go-http-client", "Go's net/http"},
	{"okhttp", "OkHttp"},
	{"Java/", "Java's HTTP client"},
	{"Apache-HttpClient", "Apache HttpClient"},
	{"libwww-perl", "Perl LWP"},
	{"HeadlessChrome", "headless Chrome"},
	{"PhantomJS", "PhantomJS"},
	// Link previews of chat and social services, and search crawlers.
	{"facebookexternalhit", "Facebook link previews"},
	{"Slackbot", "Slack link previews"},
	{"Twitterbot", "X (Twitter) link previews"},
	{"LinkedInBot", "LinkedIn link previews"},
	{"Discordbot", "Discord link previews"},
	{"TelegramBot", "Telegram link previews"},
	{"WhatsApp", "WhatsApp link previews"},
	{"Googlebot", "Google's crawler"},
}

// bareMozilla is Apple Mail Privacy Protection's User-Agent, whole.
const bareMozilla = "Mozilla/5.0"

// bareWords mark a self-declared robot: "bot" ending a word
// (SomethingBot/1.0, "a bot;"), "crawler" or "spider" anywhere.
var bareWords = []string{"crawler", "spider"}

// LooksAutomated says whether a request looks like a machine's by itself:
// a HEAD (a browser following a link or showing an image asks GET), a
// prefetch or preview (Purpose and Sec-Purpose, Fetch Metadata and the
// Speculation Rules; X-Purpose, Safari's; X-Moz, Firefox's), no
// User-Agent at all, or one of MachineAgents.
func LooksAutomated(method string, h http.Header) bool {
	if method == http.MethodHead {
		return true
	}
	for _, name := range []string{"Purpose", "Sec-Purpose", "X-Purpose", "X-Moz"} {
		for _, v := range h.Values(name) {
			v = strings.ToLower(v)
			if strings.Contains(v, "prefetch") || strings.Contains(v, "preview") || strings.Contains(v, "prerender") {
				return true
			}
		}
	}
	return MachineAgent(h.Get("User-Agent"))
}

// MachineAgent says whether a User-Agent is a machine's: empty, Apple's
// bare one, or one that holds one of MachineAgents or a robot's word.
func MachineAgent(ua string) bool {
	ua = strings.TrimSpace(ua)
	if ua == "" || ua == bareMozilla {
		return true
	}
	lower := strings.ToLower(ua)
	for _, a := range MachineAgents {
		if strings.Contains(lower, strings.ToLower(a.Match)) {
			return true
		}
	}
	for _, w := range bareWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return endsWordBot(lower)
}

// endsWordBot finds "bot" at the end of a word: Googlebot/2.1 and "a bot"
// but not "bottle" or "Abbott".
func endsWordBot(lower string) bool {
	for i := 0; ; {
		j := strings.Index(lower[i:], "bot")
		if j < 0 {
			return false
		}
		end := i + j + 3
		if end == len(lower) || !isLetter(lower[end]) {
			return true
		}
		i = end
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

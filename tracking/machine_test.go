package tracking

import (
	"net/http"
	"testing"
)

func TestLooksAutomated(t *testing.T) {
	const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36"
	const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
	for _, c := range []struct {
		name    string
		method  string
		header  http.Header
		machine bool
	}{
		{"a browser", "GET", http.Header{"User-Agent": {chrome}}, false},
		{"Apple Mail, images loaded by the reader", "GET", http.Header{"User-Agent": {iphone}}, false},
		{"Outlook desktop", "GET", http.Header{"User-Agent": {"Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17928; Pro)"}}, false},
		{"Thunderbird", "GET", http.Header{"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0"}}, false},
		{"a word that holds bot", "GET", http.Header{"User-Agent": {"Abbott Browser/1.0 (bottle)"}}, false},
		{"HEAD", "HEAD", http.Header{"User-Agent": {chrome}}, true},
		{"no User-Agent", "GET", http.Header{}, true},
		{"blank User-Agent", "GET", http.Header{"User-Agent": {"  "}}, true},
		{"Purpose: prefetch", "GET", http.Header{"User-Agent": {chrome}, "Purpose": {"prefetch"}}, true},
		{"Sec-Purpose: prefetch;prerender", "GET", http.Header{"User-Agent": {chrome}, "Sec-Purpose": {"prefetch;prerender"}}, true},
		{"X-Purpose: preview", "GET", http.Header{"User-Agent": {chrome}, "X-Purpose": {"preview"}}, true},
		{"X-Moz: prefetch", "GET", http.Header{"User-Agent": {chrome}, "X-Moz": {"prefetch"}}, true},
		{"Gmail's proxy", "GET", http.Header{"User-Agent": {"Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)"}}, true},
		{"Yahoo's proxy", "GET", http.Header{"User-Agent": {"YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html"}}, true},
		{"Apple Mail Privacy Protection", "GET", http.Header{"User-Agent": {"Mozilla/5.0"}}, true},
		{"Safe Links", "GET", http.Header{"User-Agent": {"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/534+ (KHTML, like Gecko) BingPreview/1.0b"}}, true},
		{"curl", "GET", http.Header{"User-Agent": {"curl/8.5.0"}}, true},
		{"Go", "GET", http.Header{"User-Agent": {"Go-http-client/2.0"}}, true},
		{"python", "GET", http.Header{"User-Agent": {"python-requests/2.32.3"}}, true},
		{"headless", "GET", http.Header{"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36"}}, true},
		{"Slack", "GET", http.Header{"User-Agent": {"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"}}, true},
		{"a generic bot", "GET", http.Header{"User-Agent": {"Mozilla/5.0 (compatible; SomeScannerBot/2.1; +https://scan.example)"}}, true},
		{"a crawler", "GET", http.Header{"User-Agent": {"ExampleCrawler/1.0"}}, true},
		{"Mimecast", "GET", http.Header{"User-Agent": {"Mozilla/5.0 Mimecast URL Protect"}}, true},
	} {
		if got := LooksAutomated(c.method, c.header); got != c.machine {
			t.Errorf("%s: machine %v, want %v", c.name, got, c.machine)
		}
	}
}

// Every listed agent is recognised in a User-Agent that holds it, in any
// case.
func TestEveryMachineAgentIsRecognised(t *testing.T) {
	for _, a := range MachineAgents {
		if !MachineAgent("Mozilla/5.0 (compatible) " + a.Match + " 1.0") {
			t.Errorf("%q (%s) not recognised", a.Match, a.What)
		}
	}
}

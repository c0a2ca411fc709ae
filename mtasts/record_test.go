package mtasts

import (
	"strings"
	"testing"
)

func TestParseRecord(t *testing.T) {
	for _, tc := range []struct {
		txt string
		id  string // "" when the record is invalid
	}{
		{"v=STSv1; id=20160831085700Z", "20160831085700Z"},
		{"v=STSv1;id=abc", "abc"},
		{"v=STSv1; id=abc;", "abc"},
		{"v=STSv1 ;\tid=abc ; ", "abc"},
		{"v=STSv1; id=abc; ext.name-1_=va:lue<>", "abc"},
		{"v=STSv1; ext=1; id=abc", "abc"},
		{"v=STSv1; id=" + strings.Repeat("a", 32), strings.Repeat("a", 32)},

		// Invalid: the domain then has no usable policy.
		{"", ""},
		{"v=STSv1", ""},
		{"v=STSv1;", ""},
		{"v=STSv1; ", ""},
		{"V=STSv1; id=abc", ""},     // %s: case-sensitive
		{"v=stsv1; id=abc", ""},     // likewise
		{"v=STSv1; ID=abc", ""},     // an extension named ID, and no id
		{"v=STSv1x; id=abc", ""},    // not the version
		{" v=STSv1; id=abc", ""},    // no leading blanks
		{"v=STSv1; id=abc ", ""},    // blanks only around ";"
		{"v=STSv1 id=abc", ""},      // no delimiter
		{"v=STSv1;; id=abc", ""},    // an empty field
		{"v=STSv1; id=", ""},        // an empty id
		{"v=STSv1; id=a-b", ""},     // letters and digits only
		{"v=STSv1; id=ab\x00c", ""}, // a NUL
		{"v=STSv1; id=abc; id=abd", ""},
		{"v=STSv1; id=" + strings.Repeat("a", 33), ""},
		{"v=STSv1; id=abc; x=", ""},     // an empty extension value
		{"v=STSv1; id=abc; x=a=b", ""},  // "=" in an extension value
		{"v=STSv1; id=abc; _x=1", ""},   // a name starts with a letter or digit
		{"v=STSv1; id=abc; x", ""},      // a field without "="
		{"v=STSv1; id=abc; é=1", ""},    // ASCII names
		{"v=STSv1; id=abc; x=\xff", ""}, // ASCII values
		{"v=STSv1; id=abc; " + strings.Repeat("a", 33) + "=1", ""},
		{"v=STSv1; id=abc" + strings.Repeat(";", 10000), ""},
	} {
		rec, err := ParseRecord(tc.txt)
		if tc.id == "" {
			if err == nil {
				t.Errorf("ParseRecord(%q) = %+v, want an error", clip(tc.txt), rec)
			}
			continue
		}
		if err != nil || rec.ID != tc.id {
			t.Errorf("ParseRecord(%q) = %+v, %v; want id %q", tc.txt, rec, err, tc.id)
		}
	}
}

// Of the TXT records at _mta-sts, those not beginning with the version
// are someone else's; exactly one STS record must remain (RFC 8461 §3.1).
func TestPickRecord(t *testing.T) {
	for _, tc := range []struct {
		name     string
		txts     []string
		id       string
		noRecord bool
	}{
		{"none at all", nil, "", true},
		{"only others", []string{"google-site-verification=x", "v=spf1 -all"}, "", true},
		{"one among others", []string{"v=spf1 -all", "v=STSv1; id=1"}, "1", false},
		{"two valid", []string{"v=STSv1; id=1", "v=STSv1; id=2"}, "", false},
		{"one valid, one invalid", []string{"v=STSv1; id=1", "v=STSv1;"}, "", false},
		{"one invalid", []string{"v=STSv1; id=-"}, "", false},
		{"the version misspelt", []string{"v=STSv1x; id=1"}, "", false},
	} {
		rec, err := pickRecord(tc.txts)
		switch {
		case tc.id != "":
			if err != nil || rec.ID != tc.id {
				t.Errorf("%s: %+v, %v; want id %q", tc.name, rec, err, tc.id)
			}
		case tc.noRecord:
			if err != errNoRecord {
				t.Errorf("%s: %+v, %v; want no record", tc.name, rec, err)
			}
		default:
			if err == nil || err == errNoRecord {
				t.Errorf("%s: %+v, %v; want an invalid record", tc.name, rec, err)
			}
		}
	}
}

package mailroom

import "testing"

func TestMaySendFrom(t *testing.T) {
	anyDomain := &APIKey{}
	one := &APIKey{Domain: "shop.example"}
	for _, c := range []struct {
		key  *APIKey
		name string
		want bool
	}{
		{anyDomain, "shop.example", true},
		{anyDomain, "other.example", true},
		{one, "shop.example", true},
		{one, "other.example", false},
		{one, "mail.shop.example", false}, // a subdomain is another domain
	} {
		if got := c.key.MaySendFrom(c.name); got != c.want {
			t.Errorf("key for %q MaySendFrom(%q) = %v, want %v", c.key.Domain, c.name, got, c.want)
		}
		err := c.key.CheckSendingFrom("From", c.name)
		if (err == nil) != c.want || (err != nil && !IsCode(err, ECodeDomainNotVerified)) {
			t.Errorf("key for %q CheckSendingFrom(%q) = %v", c.key.Domain, c.name, err)
		}
	}
}

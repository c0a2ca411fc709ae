package resend

import (
	"slices"
	"testing"

	"github.com/mailroom/mailroom"
)

func TestPermissionScopes(t *testing.T) {
	every := []string{"send", "domains", "templates", "webhooks", "receive", "keys"}
	for _, c := range []struct {
		req        CreateAPIKeyRequest
		scopes     []string
		domain     string
		validation bool
	}{
		{req: CreateAPIKeyRequest{Name: "a"}, scopes: every},
		{req: CreateAPIKeyRequest{Name: "a", Permission: "full_access"}, scopes: every},
		// Resend uses domain_id with sending_access alone.
		{req: CreateAPIKeyRequest{Name: "a", Permission: "full_access", DomainID: "dom_1"}, scopes: every},
		{req: CreateAPIKeyRequest{Name: "a", Permission: "sending_access"}, scopes: []string{"send"}},
		{req: CreateAPIKeyRequest{Name: "a", Permission: "sending_access", DomainID: "dom_1"}, scopes: []string{"send"}, domain: "dom_1"},
		{req: CreateAPIKeyRequest{Name: "a", Permission: "read_only"}, validation: true},
		{req: CreateAPIKeyRequest{Name: "a", Permission: "Full_Access"}, validation: true},
	} {
		name, scopes, domain, err := c.req.NewKey()
		if c.validation {
			if !mailroom.IsCode(err, mailroom.ECodeValidation) {
				t.Errorf("%+v: %v, want a validation error", c.req, err)
			}
			continue
		}
		if err != nil || name != c.req.Name || !slices.Equal(scopes, c.scopes) || domain != c.domain {
			t.Errorf("%+v: %q %v %q %v", c.req, name, scopes, domain, err)
		}
	}
}

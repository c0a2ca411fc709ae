package sqlstore

import (
	"encoding/json"

	"github.com/mailroom/mailroom"
)

// marshalHealthChecks is a domain's checks column: a JSON array, "[]"
// before the first check (docs/api.md "Domain health").
func marshalHealthChecks(checks []mailroom.HealthCheck) (string, error) {
	if checks == nil {
		checks = []mailroom.HealthCheck{}
	}
	b, err := json.Marshal(checks)
	return string(b), err
}

// unmarshalHealthChecks reads the checks column; a domain without checks
// reads as an empty list, never nil, so that it shows as [].
func unmarshalHealthChecks(s string) ([]mailroom.HealthCheck, error) {
	checks := []mailroom.HealthCheck{}
	if s == "" {
		return checks, nil
	}
	err := json.Unmarshal([]byte(s), &checks)
	return checks, err
}

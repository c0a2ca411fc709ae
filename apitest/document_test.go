package apitest

import (
	"strings"
	"testing"
)

// The published document promises what every response carries and what
// the service routes answer, so that generated clients can rely on it.
func TestDocumentDeclaresRequestIDLicenseAndServiceErrors(t *testing.T) {
	doc, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	if doc.Info.License == nil || doc.Info.License.Name == "" {
		t.Error("info.license is missing")
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, ref := range op.Responses.Map() {
				if ref.Value == nil || ref.Value.Headers["X-Request-Id"] == nil {
					t.Errorf("%s %s: response %s does not declare X-Request-Id", method, path, status)
				}
			}
			if path == "/healthz" || path == "/readyz" || path == "/v1/openapi.json" {
				var fourxx []string
				for status := range op.Responses.Map() {
					if strings.HasPrefix(status, "4") {
						fourxx = append(fourxx, status)
					}
				}
				if len(fourxx) == 0 {
					t.Errorf("%s %s declares no 4xx answer", method, path)
				}
			}
		}
	}
}

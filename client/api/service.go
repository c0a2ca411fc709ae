package api

// Status answers GET /healthz and GET /readyz: {"status": "ok"} (OpenAPI
// schema Status). Neither takes a key.
type Status struct {
	Status string `json:"status"`
}

// StatusOK is the only Status the service answers with a 200.
const StatusOK = "ok"

package http

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/mailroom/mailroom/client/api"
)

//go:embed openapi.json
var openAPIDocument []byte

// getHealth answers while the process runs (liveness).
func (s *Server) getHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, api.Status{Status: api.StatusOK})
}

// getReady answers 200 only while storage answers, so that a load balancer
// takes a node that lost its database out of rotation.
func (s *Server) getReady(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.Store.Ping(ctx); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Status{Status: api.StatusOK})
}

// getOpenAPI serves the OpenAPI 3.1 description of every route that exists.
func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPIDocument)
}

// OpenAPIDocument returns the OpenAPI document the API serves.
func OpenAPIDocument() []byte { return openAPIDocument }

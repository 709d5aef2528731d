package server

import (
	"context"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/openapi"
)

// health answers getHealth (GET /health): no authentication, no dependency
// details; 503 unavailable when the database does not answer, so a load
// balancer stops sending traffic here.
func (s *Server) health() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.store.Ping(ctx); err != nil {
			s.log.Warn("health check: database unreachable", "error", err)
			s.fail(w, r, fault.New(fault.Unavailable, "the service is temporarily unavailable"))
			return
		}
		// version is the interface's (the document's info.version, which
		// a client's generated code was built from); service_version is the
		// build's (docs/api.md, Health).
		writeJSON(w, http.StatusOK, mustJSON(openapi.Health{
			Status: "ok", Service: "paygate", Version: openapi.Version(),
			ServiceVersion: s.cfg.Version, Environment: s.cfg.Environment,
		}))
	})
}

// openapiDocument serves the contract, unauthenticated.
func (s *Server) openapiDocument() http.Handler {
	doc := openapi.JSON()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(doc)
	})
}

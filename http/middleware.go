package http

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// observe is the outermost layer: it gives the request its id, recovers a
// panicking handler into a 500 that reveals nothing, and writes one log
// line and the metrics when the request ends.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.metrics.inFlight.Inc()
		defer s.metrics.inFlight.Dec()
		info := &requestInfo{requestID: requestID(r, s.now()), route: "unmatched"}
		w.Header().Set("X-Request-Id", info.requestID)
		setSecurityHeaders(w.Header(), r, !s.NoHSTS)
		rec := &statusRecorder{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))

		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panicked", "request_id", info.requestID, "panic", fmt.Sprint(p))
				if rec.status == 0 {
					writeError(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			elapsed := time.Since(start)
			s.metrics.observe(r.Method, info.route, rec.status, elapsed)
			attrs := []slog.Attr{
				slog.String("request_id", info.requestID),
				slog.String("method", r.Method),
				slog.String("route", info.route),
				slog.Int("status", rec.status),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.Int("bytes", rec.bytes),
			}
			if info.keyID != "" {
				attrs = append(attrs, slog.String("key_id", info.keyID))
			}
			if info.errorCode != "" {
				attrs = append(attrs, slog.String("error", info.errorCode))
			}
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

package http

import "net/http"

func (s *Server) resendSendEmail(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) resendSendBatch(w http.ResponseWriter, r *http.Request) { notYet(w, r) }

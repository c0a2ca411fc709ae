package http

import "net/http"

func (s *Server) resendCreateAPIKey(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) resendListAPIKeys(w http.ResponseWriter, r *http.Request)  { notYet(w, r) }
func (s *Server) resendDeleteAPIKey(w http.ResponseWriter, r *http.Request) { notYet(w, r) }

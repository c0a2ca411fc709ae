package http

import "net/http"

func (s *Server) resendListEmails(w http.ResponseWriter, r *http.Request)  { notYet(w, r) }
func (s *Server) resendGetEmail(w http.ResponseWriter, r *http.Request)    { notYet(w, r) }
func (s *Server) resendUpdateEmail(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) resendCancelEmail(w http.ResponseWriter, r *http.Request) { notYet(w, r) }

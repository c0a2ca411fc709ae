package http

import "net/http"

func (s *Server) resendCreateDomain(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) resendListDomains(w http.ResponseWriter, r *http.Request)  { notYet(w, r) }
func (s *Server) resendGetDomain(w http.ResponseWriter, r *http.Request)    { notYet(w, r) }
func (s *Server) resendUpdateDomain(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) resendDeleteDomain(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) resendVerifyDomain(w http.ResponseWriter, r *http.Request) { notYet(w, r) }

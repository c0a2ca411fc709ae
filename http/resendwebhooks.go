package http

import "net/http"

func (s *Server) resendCreateWebhook(w http.ResponseWriter, r *http.Request)       { notYet(w, r) }
func (s *Server) resendListWebhooks(w http.ResponseWriter, r *http.Request)        { notYet(w, r) }
func (s *Server) resendGetWebhook(w http.ResponseWriter, r *http.Request)          { notYet(w, r) }
func (s *Server) resendUpdateWebhook(w http.ResponseWriter, r *http.Request)       { notYet(w, r) }
func (s *Server) resendDeleteWebhook(w http.ResponseWriter, r *http.Request)       { notYet(w, r) }
func (s *Server) resendRotateWebhookSecret(w http.ResponseWriter, r *http.Request) { notYet(w, r) }

package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/tlscert"
)

// serveBare serves POST /v1/send at addr with nothing behind it, until
// killed: the reference scripts/bench sets Mailroom's accept rate beside
// (issue 17 aims at a fraction of it). It pays what any Go HTTPS JSON
// service pays for a send (the TLS record layer, HTTP/1.1, reading and
// decoding the body, encoding an answer) and none of what Mailroom adds
// (routing and middleware, key lookup, rate limits, validation, storage),
// so the ratio of the two is Mailroom's overhead on this machine.
//
// To keep the comparison about the handler, the listener is Mailroom's
// own: the same http.Server settings and TLS configuration, and a
// self-signed certificate made the same way in ./mailroom-data/tls, where
// the load finds it with the same -cacert.
func serveBare(addr string) {
	cert, _, err := tlscert.SelfSigned("mailroom-data", "", time.Now())
	if err != nil {
		fail("-serve-bare: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/send", bareSend)
	srv := mhttp.NewHTTPServer(addr, mux, tlscert.ServerConfig(cert), slog.New(slog.DiscardHandler))
	// Listen before saying so: scripts/bench starts the load on that line.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fail("-serve-bare: %v", err)
	}
	fmt.Printf("bare handler serving on https://%s (certificate in mailroom-data/tls)\n", ln.Addr())
	fail("-serve-bare: %v", srv.ServeTLS(ln, "", ""))
}

// bareSend answers a send as Mailroom does, 200 with the message's id and
// "queued", after the checks every handler makes however bare: a bearer
// key is present and the body is the JSON of a message with a recipient.
func bareSend(w http.ResponseWriter, r *http.Request) {
	if key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || key == "" {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	var m message
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&m); err != nil || m.To == "" {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(api.SendResult{Status: api.SendQueued, MessageID: mailroom.NewID(mailroom.PrefixMessage, time.Now())})
}

package http

import (
	"log/slog"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/send"
)

// sendBatch: POST /v1/send/batch. A 200 means every accepted item is
// committed to storage, in one transaction.
func (s *Server) sendBatch(w http.ResponseWriter, r *http.Request) {
	env, err := decodeBatch(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := env.Validate(r.Header.Values("Idempotency-Key")); err != nil {
		writeError(w, r, err)
		return
	}
	items := make([]send.BatchItem, len(env.Messages))
	for i, raw := range env.Messages {
		items[i] = decodeBatchItem(raw)
	}
	outcomes, err := s.Sender.SendBatch(r.Context(), keyFrom(r.Context()), items)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toBatchResult(r, outcomes))
}

// toBatchResult is the answer to a batch (docs/api.md "Batch sends"):
// data[i] answers messages[i] with the body POST /v1/send would have
// answered it, a SendResult or an ErrorBody, and the two are counted.
func toBatchResult(r *http.Request, outcomes []mailroom.AcceptOutcome) api.BatchSendResult {
	out := api.BatchSendResult{Data: make([]api.BatchItemResult, len(outcomes))}
	for i, o := range outcomes {
		if o.Err != nil {
			e := itemError(r, o.Err)
			out.Data[i] = api.BatchItemResult{Error: e.Error, Message: e.Message, Details: e.Details}
			out.Failed++
			continue
		}
		res := toSendResult(o.Result)
		out.Data[i] = api.BatchItemResult{Status: res.Status, MessageID: res.MessageID}
		out.Accepted++
	}
	return out
}

// decodeBatchItem reads one item as the body of POST /v1/send is read.
func decodeBatchItem(raw jsontext.Value) send.BatchItem {
	if k := raw.Kind(); k != '{' {
		return send.BatchItem{Err: mailroom.Errorf(mailroom.ECodeInvalidJSON,
			"The item must be a JSON object (a send request), not %s.", kindName(k))}
	}
	var req mailroom.SendRequest
	if err := unmarshalRequest(raw, &req); err != nil {
		return send.BatchItem{Err: err}
	}
	return send.BatchItem{Request: &req}
}

// itemError is the error body of one item: what writeError would answer
// had it been sent alone. A failure of storage fails the whole batch
// (SendBatch), so only an item's own problems come here, or a bug, which
// is logged and shown as writeError shows one.
func itemError(r *http.Request, err error) api.ErrorBody {
	e, ok := err.(*mailroom.Error)
	if !ok || e.Code == mailroom.ECodeInternal {
		id := requestInfoFrom(r.Context()).requestID
		slog.Default().Error("internal error in a batch item", "request_id", id, "err", err)
		return api.ErrorBody{Error: mailroom.ECodeInternal, Message: "An internal error occurred. Quote request id " + id + " when reporting it."}
	}
	return toErrorBody(e)
}

package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/strictjson"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/schemas"
)

// PathHealth answers GET with 200 while the server runs.
const PathHealth = "/healthz"

// maxMessageLen bounds an error message sent to a worker.
const maxMessageLen = 300

// Router serves the four endpoints (docs/protocol/control-plane.md#the-endpoints) and GET /healthz. Every request
// is authenticated by auth, size-limited, decoded strictly (one JSON
// value, no unknown field) and validated against its schema before the
// Service sees it; every answer is validated against its own. A refusal
// is an ErrorResponse with a stable code and never carries a token.
func (s *Service) Router(auth Authenticator) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST "+PathClaim, endpoint(s, auth, schemas.WorkerClaimRequest, schemas.WorkerClaimResponse,
		s.Claim, func(r *ClaimRequest) string { return r.WorkerID }))
	mux.Handle("POST "+PathHeartbeat, endpoint(s, auth, schemas.WorkerHeartbeatRequest, schemas.WorkerHeartbeatResponse,
		s.Heartbeat, func(r *HeartbeatRequest) string { return r.WorkerID }))
	mux.Handle("POST "+PathComplete, endpoint(s, auth, schemas.WorkerCompleteRequest, schemas.WorkerCompleteResponse,
		s.Complete, func(r *CompleteRequest) string { return r.WorkerID }))
	mux.Handle("POST "+PathFail, endpoint(s, auth, schemas.WorkerFailRequest, schemas.WorkerFailResponse,
		s.Fail, func(r *FailRequest) string { return r.WorkerID }))
	mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	return mux
}

// endpoint is one worker API handler: the checks every endpoint shares
// around op.
func endpoint[Req, Resp any](s *Service, auth Authenticator, reqKind, respKind schemas.Kind,
	op func(context.Context, Req) (Resp, error), workerOf func(*Req) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authWorker, err := auth.Authenticate(r)
		if err != nil {
			if errors.Is(err, ErrUnauthenticated) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="azolla control plane"`)
				s.writeError(w, r, newError(http.StatusUnauthorized, CodeUnauthenticated, "a valid worker token is required"))
				return
			}
			s.writeError(w, r, asError("authenticate", err))
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			s.writeError(w, r, errInvalid("Content-Type must be application/json"))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				s.writeError(w, r, newError(http.StatusRequestEntityTooLarge, CodeTooLarge,
					"request body larger than %d bytes", tooLarge.Limit))
				return
			}
			s.writeError(w, r, errInvalid("read the request body: %v", err))
			return
		}
		var req Req
		if err := strictjson.Decode(bytes.NewReader(body), &req); err != nil {
			s.writeError(w, r, errInvalid("malformed request: %v", err))
			return
		}
		if err := schemas.ValidateJSON(reqKind, body); err != nil {
			s.writeError(w, r, errInvalid("%v", err))
			return
		}
		if authWorker != "" && workerOf(&req) != authWorker {
			s.writeError(w, r, errForbidden("worker_id is not the worker this token was issued to"))
			return
		}
		resp, err := op(r.Context(), req)
		if err != nil {
			s.writeError(w, r, asError(r.URL.Path, err))
			return
		}
		if err := schemas.Validate(respKind, resp); err != nil {
			s.log.Error("worker API answer fails its schema", "path", r.URL.Path, "error", err)
			s.writeError(w, r, newError(http.StatusInternalServerError, CodeInternal, "the answer failed its own schema"))
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// writeError answers e as an ErrorResponse. Messages are cut and made
// printable (a field name from a hostile body could carry a terminal
// escape); server-side failures are logged with their cause.
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	if e.Status >= 500 && r.Context().Err() != nil {
		// The worker hung up (stopped mid long poll): nobody reads the
		// answer and nothing failed on this side.
		s.log.Debug("worker went away mid-request", "path", r.URL.Path, "error", e.Err)
	} else if e.Status >= 500 {
		s.log.Warn("worker API request failed", "path", r.URL.Path, "code", e.Code, "error", e.Err)
	}
	msg := textsafe.Line(proc.CutAtRune(e.Message, maxMessageLen))
	writeJSON(w, e.Status, ErrorResponse{Error: ErrorBody{Code: e.Code, Message: msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Only the package's own types come here; they always marshal.
		body = fmt.Appendf(nil, `{"error":{"code":%q,"message":"marshal the answer"}}`, CodeInternal)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

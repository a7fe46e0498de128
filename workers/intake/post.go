package intake

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// PathIntake is where the ops address takes documents from other trackers.
const PathIntake = "/intake"

// SignatureHeader carries a document's signature: "sha256=" and the hex
// HMAC-SHA256 of the body, keyed by ops.intake_secret_env's secret (as
// GitHub signs its webhooks).
const SignatureHeader = "X-Azolla-Signature"

// maxDocument bounds a posted document.
const maxDocument = 256 << 10

// Request is the document POST /intake takes (schemas/intake_request).
type Request struct {
	Source             string   `json:"source"`
	ExternalID         string   `json:"external_id"`
	Kind               string   `json:"kind"`
	Title              string   `json:"title"`
	Description        string   `json:"description,omitempty"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	URL                string   `json:"url,omitempty"`
	Repository         string   `json:"repository,omitempty"`
	Urgency            string   `json:"urgency,omitempty"`
}

// Response answers a document taken: what it became, and whether this
// delivery created it (false: it had been taken before).
type Response struct {
	Kind        string `json:"kind"`
	ObjectiveID string `json:"objective_id,omitempty"`
	CaptureID   string `json:"capture_id,omitempty"`
	Created     bool   `json:"created"`
}

// PostStore is what POST /intake writes: the item, and what it becomes.
type PostStore interface {
	store.IntakeTaker
}

// PostOptions shape the handler.
type PostOptions struct {
	Store PostStore
	// Secret is the signing secret, read per request (a rotated one is
	// picked up); "" refuses every document.
	Secret func() string
	// Repositories are the patch.repositories keys an objective may
	// target; Defaults gives a repository's budget_usd and attempts for a
	// new objective, as `objective create` applies them (nil: none).
	Repositories []string
	Defaults     func(repository string) (budgetUSD float64, attempts int)
	// Start starts an objective's lifecycle (best effort: the poller
	// starts it otherwise).
	Start    func(ctx context.Context, o *domain.Objective) error
	Observer Observer
	Log      *slog.Logger
	Now      func() time.Time
}

// PostHandler serves POST /intake: a signed document becomes one capture
// or one NEW objective, once per (source, external_id). Answers: 201 with
// what it became, 200 when it had been taken before (the same answer), 401
// for a missing or wrong signature, 400 for a document the schema or the
// configuration refuses, 413 for one too large. Nothing is written
// unless the answer is 201.
func PostHandler(o PostOptions) http.Handler {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDocument))
		if err != nil {
			http.Error(w, "document too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		if !signed(o.Secret(), r.Header.Get(SignatureHeader), body) {
			http.Error(w, "missing or wrong "+SignatureHeader, http.StatusUnauthorized)
			return
		}
		var req Request
		if err := schemas.ValidateJSON(schemas.IntakeRequest, body); err != nil {
			http.Error(w, oneLine(err.Error(), 1000), http.StatusBadRequest)
			return
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "not a JSON document", http.StatusBadRequest)
			return
		}
		res, status, err := take(r.Context(), o, req)
		if err != nil {
			if status == http.StatusInternalServerError {
				log.Warn("intake: take a document", "source", req.Source, "external_id", req.ExternalID, "error", err)
			}
			if o.Observer != nil {
				o.Observer.Intake(req.Source, "refused")
			}
			http.Error(w, oneLine(err.Error(), 1000), status)
			return
		}
		if o.Observer != nil {
			o.Observer.Intake(req.Source, map[bool]string{true: "created", false: "exists"}[res.Created])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(map[bool]int{true: http.StatusCreated, false: http.StatusOK}[res.Created])
		_ = json.NewEncoder(w).Encode(res)
	})
}

// signed checks a document's signature in constant time.
func signed(secret, header string, body []byte) bool {
	got, ok := strings.CutPrefix(header, "sha256=")
	if secret == "" || !ok || got == "" {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	return subtle.ConstantTimeCompare([]byte(strings.ToLower(got)), []byte(want)) == 1
}

// take records the document and creates what it becomes.
func take(ctx context.Context, o PostOptions, req Request) (Response, int, error) {
	now := time.Now().UTC()
	if o.Now != nil {
		now = o.Now()
	}
	it := &domain.IntakeItem{Source: req.Source, ExternalID: req.ExternalID, Kind: req.Kind, URL: req.URL,
		Repository: req.Repository, CreatedAt: now, UpdatedAt: now}
	var obj *domain.Objective
	var capture *domain.CaptureBuffer
	switch req.Kind {
	case domain.IntakeObjective:
		if req.Repository != "" && !slices.Contains(o.Repositories, req.Repository) {
			return Response{}, http.StatusBadRequest, fmt.Errorf("repository %q is not one of patch.repositories", req.Repository)
		}
		obj = objectiveFromRequest(req, now)
		if o.Defaults != nil && req.Repository != "" {
			b, n := o.Defaults(req.Repository)
			if b > 0 {
				obj.BudgetUSD = &b
			}
			if n > 1 {
				obj.Attempts = &n
			}
		}
		it.ObjectiveID = obj.ObjectiveID
	case domain.IntakeCapture:
		sum := sha256.Sum256([]byte(req.Source + "\x00" + req.ExternalID))
		it.CaptureID = "cap-" + req.Source + "-" + hex.EncodeToString(sum[:8])
		content := req.Title
		if req.Description != "" {
			content += "\n\n" + req.Description
		}
		capture = &domain.CaptureBuffer{CaptureBufferID: it.CaptureID, Source: cmp.Or(req.URL, req.Source+" "+req.ExternalID),
			Content: content, Status: domain.CapturePending, CreatedAt: now, UpdatedAt: now}
	}
	got, created, err := store.TakeIntake(ctx, o.Store, it, obj, capture, now)
	if err != nil {
		return Response{}, statusOf(err), err
	}
	if created && obj != nil && o.Start != nil {
		if err := o.Start(ctx, obj); err != nil && o.Log != nil {
			o.Log.Warn("intake: start the lifecycle; the poller will", "objective", obj.ObjectiveID, "error", err)
		}
	}
	return Response{Kind: got.Kind, ObjectiveID: got.ObjectiveID, CaptureID: got.CaptureID, Created: created}, 0, nil
}

// statusOf is the answer to a document the store refused: its validation
// (the document's own fault), or anything else (azolla's).
func statusOf(err error) int {
	var ve *schemas.ValidationError
	if errors.As(err, &ve) {
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// objectiveFromRequest is the NEW objective a document becomes.
func objectiveFromRequest(req Request, now time.Time) *domain.Objective {
	criteria := req.AcceptanceCriteria
	if criteria == nil {
		criteria = []string{}
	}
	return &domain.Objective{ObjectiveID: newID(idWords(req.Source+"-"+req.ExternalID, 50)), ObjectiveType: "TICKET", Title: req.Title,
		Description: req.Description, AcceptanceCriteria: criteria, Status: domain.StatusNew, Blockers: []string{},
		Urgency: cmp.Or(req.Urgency, "NORMAL"), Repository: req.Repository, Provenance: req.URL, CreatedAt: now,
		UpdatedAt: now}
}

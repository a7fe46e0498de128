package webhook

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/store"
)

// maxBody bounds a delivery; forges send far less.
const maxBody = 1 << 20

// Store is what the webhook reads of an objective a delivery names: its
// pull request (is it open?) and the objective itself, to wake.
type Store interface {
	store.ObjectiveQuerier
	store.PullRequestQuerier
}

// Waker wakes an objective's lifecycle (starter.Start): it reads its pull
// request at once.
type Waker func(ctx context.Context, o *domain.Objective) error

// Handler takes the webhook deliveries (docs/pull-requests.md#webhooks) of
// forges, the configured repositories' forges; one without a
// webhook_secret_env takes none. A delivery is matched to a forge by the
// repository it names and its signature checked with that forge's secret;
// for each branch it concerns that is an objective's with an open pull
// request, the lifecycle is woken to read it, as `azolla pr sync` does.
// Nothing in a delivery is trusted beyond that: the lifecycle reads the
// pull request from the forge itself.
//
// An authentic delivery for a repository that takes issues
// (forge.intake) also wakes the forge intake (wakeIntake; nil for none),
// which reads the forge at once: an issue opened, labelled or edited, a
// comment with a command. What the delivery says is not taken; the
// intake reads the forge.
//
// Answers: 202 when a lifecycle or the intake was woken, 204 for an
// authentic delivery about nothing azolla follows, 401 for a bad or
// missing signature, 404 for a repository without a webhook secret, 400
// for a body that is not a delivery.
func Handler(forges []config.ForgeConfig, getenv func(string) string, st Store, wake Waker, wakeIntake func(),
	log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "unreadable delivery", http.StatusBadRequest)
			return
		}
		f, ev, status := matchDelivery(forges, getenv, r.Header, body)
		if status != 0 {
			http.Error(w, http.StatusText(status), status)
			return
		}
		woken := 0
		for _, b := range ev.Branches {
			id, ok := strings.CutPrefix(b, "azolla/")
			if !ok || id == "" {
				continue
			}
			if wakeFollowed(r.Context(), st, wake, id) {
				woken++
				log.Info("webhook: lifecycle woken to read its pull request", "forge", f.Kind,
					"repository", f.Repository, "objective_id", id)
			}
		}
		if f.Intake.Enabled() && wakeIntake != nil {
			wakeIntake()
			woken++
			log.Debug("webhook: forge intake woken", "forge", f.Kind, "repository", f.Repository)
		}
		if woken == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
}

// matchDelivery finds the forge a delivery is for and checks its
// signature; a non-zero status is the answer when it cannot be taken.
func matchDelivery(forges []config.ForgeConfig, getenv func(string) string, h http.Header, body []byte) (config.ForgeConfig, forge.WebhookEvent, int) {
	for _, kind := range []string{forge.KindGitHub, forge.KindGitea, forge.KindGitLab} {
		ev, err := forge.ParseWebhook(kind, body)
		if err != nil {
			return config.ForgeConfig{}, forge.WebhookEvent{}, http.StatusBadRequest
		}
		for _, f := range forges {
			if f.Kind != kind || f.WebhookSecretEnv == "" || !strings.EqualFold(f.Repository, ev.Repository) {
				continue
			}
			if forge.VerifyWebhook(kind, f.WebhookSecret(getenv), h, body) != nil {
				return f, ev, http.StatusUnauthorized
			}
			return f, ev, 0
		}
	}
	return config.ForgeConfig{}, forge.WebhookEvent{}, http.StatusNotFound
}

// wakeFollowed wakes objective id's lifecycle if its pull request is open.
func wakeFollowed(ctx context.Context, st Store, wake Waker, id string) bool {
	pr, err := st.GetPullRequest(ctx, id)
	if err != nil || pr.State != domain.PullRequestOpen {
		return false
	}
	o, err := st.GetObjective(ctx, id)
	if err != nil {
		return false
	}
	return wake(ctx, o) == nil
}

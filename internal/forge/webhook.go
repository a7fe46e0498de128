package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// ErrBadSignature: a webhook delivery whose signature (or token) does not
// match the configured secret, or that carries none.
var ErrBadSignature = errors.New("webhook signature does not match")

// VerifyWebhook checks a delivery's authenticity as its forge signs it:
// GitHub's X-Hub-Signature-256 ("sha256=" and the hex HMAC-SHA256 of the
// body), Gitea's and Forgejo's X-Gitea-Signature / X-Forgejo-Signature
// (the hex HMAC-SHA256), GitLab's X-Gitlab-Token (the secret itself).
// Comparisons take constant time.
func VerifyWebhook(kind, secret string, h http.Header, body []byte) error {
	if secret == "" {
		return ErrBadSignature
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	var got string
	switch kind {
	case KindGitHub:
		got, _ = strings.CutPrefix(h.Get("X-Hub-Signature-256"), "sha256=")
	case KindGitea:
		got = h.Get("X-Gitea-Signature")
		if got == "" {
			got = h.Get("X-Forgejo-Signature")
		}
	case KindGitLab:
		got, want = h.Get("X-Gitlab-Token"), secret
	default:
		return ErrBadSignature
	}
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return ErrBadSignature
	}
	return nil
}

// WebhookEvent is what azolla reads of a delivery: the repository it is
// about and the head branches of the pull requests it concerns.
type WebhookEvent struct {
	Repository string
	Branches   []string
}

// ParseWebhook reads a delivery's repository (owner/name, GitLab's full
// path) and the head branches it concerns: a pull request's (opened,
// reviewed, commented, merged, closed), a merge request's, or those a
// commit status or check run names. A delivery about anything else has no
// branch.
func ParseWebhook(kind string, body []byte) (WebhookEvent, error) {
	var p struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Project struct {
			Path string `json:"path_with_namespace"`
		} `json:"project"`
		PullRequest struct {
			Head struct {
				Ref string `json:"ref"`
			} `json:"head"`
		} `json:"pull_request"`
		ObjectAttributes struct {
			SourceBranch string `json:"source_branch"`
			Ref          string `json:"ref"` // a pipeline's branch
		} `json:"object_attributes"`
		MergeRequest struct {
			SourceBranch string `json:"source_branch"`
		} `json:"merge_request"`
		Branches []struct {
			Name string `json:"name"`
		} `json:"branches"`
		CheckRun struct {
			PullRequests []struct {
				Head struct {
					Ref string `json:"ref"`
				} `json:"head"`
			} `json:"pull_requests"`
		} `json:"check_run"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return WebhookEvent{}, err
	}
	ev := WebhookEvent{Repository: p.Repository.FullName}
	add := func(b string) {
		if b != "" {
			ev.Branches = append(ev.Branches, b)
		}
	}
	if kind == KindGitLab {
		ev.Repository = p.Project.Path
		add(p.ObjectAttributes.SourceBranch)
		add(p.ObjectAttributes.Ref)
		add(p.MergeRequest.SourceBranch)
		return ev, nil
	}
	add(p.PullRequest.Head.Ref)
	for _, b := range p.Branches {
		add(b.Name)
	}
	for _, pr := range p.CheckRun.PullRequests {
		add(pr.Head.Ref)
	}
	return ev, nil
}

package github_test

// The fake's issue events, labels' only: "REST API endpoints for issue
// events" (list issue events, oldest first) and "... for labels" (remove a
// label from an issue), as named at the top of fake_test.go.

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const docEvents = "https://docs.github.com/rest/issues/events"

// fakeLabelEvent is a "labeled" or "unlabeled" event of an issue's or a
// pull request's issue side.
type fakeLabelEvent struct {
	id     int64
	number int
	event  string
	label  string
	actor  string
	at     time.Time
}

// jsonLabelEvent is an "issue event" as GitHub lists it; a label event's
// label is its name and colour alone.
type jsonLabelEvent struct {
	ID        int64     `json:"id"`
	NodeID    string    `json:"node_id"`
	URL       string    `json:"url"`
	Actor     jsonUser  `json:"actor"`
	Event     string    `json:"event"`
	CommitID  *string   `json:"commit_id"`
	CommitURL *string   `json:"commit_url"`
	CreatedAt time.Time `json:"created_at"`
	Label     struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	} `json:"label"`
}

// recordLabels records, as actor, the labels th gained and lost between
// before and its labels now.
func (f *fakeGitHub) recordLabels(th fakeThread, actor string, before []string) {
	after := *th.labels()
	at := now()
	for _, name := range after {
		if !slices.ContainsFunc(before, func(b string) bool { return strings.EqualFold(b, name) }) {
			f.labelEvents = append(f.labelEvents, &fakeLabelEvent{id: f.id(), number: th.number(),
				event: "labeled", label: name, actor: actor, at: at})
		}
	}
	for _, name := range before {
		if !slices.ContainsFunc(after, func(a string) bool { return strings.EqualFold(a, name) }) {
			f.labelEvents = append(f.labelEvents, &fakeLabelEvent{id: f.id(), number: th.number(),
				event: "unlabeled", label: name, actor: actor, at: at})
		}
	}
}

// removeLabel removes a label from an issue, for a caller with push
// access: the labels left, or 404 "Label does not exist" when the issue
// lacks it.
func (f *fakeGitHub) removeLabel(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docLabels + "#remove-a-label-from-an-issue"
	th, ok := f.thread(w, r, doc)
	if !ok {
		return
	}
	if !f.mayWrite(u) {
		forbidden(w, doc)
		return
	}
	labels := th.labels()
	i := slices.IndexFunc(*labels, func(l string) bool { return strings.EqualFold(l, r.PathValue("name")) })
	if i < 0 {
		writeError(w, http.StatusNotFound, "Label does not exist", doc)
		return
	}
	before := slices.Clone(*labels)
	*labels = slices.Delete(*labels, i, i+1)
	f.labelsChanged(w, th, u.login, before, *labels)
}

// labelsChanged records that login changed a thread's labels from before
// to labels, and answers them, as GitHub does.
func (f *fakeGitHub) labelsChanged(w http.ResponseWriter, th fakeThread, login string, before, labels []string) {
	f.recordLabels(th, login, before)
	th.touch(now())
	out := []jsonLabel{}
	for _, name := range labels {
		out = append(out, f.labelJSON(f.labels[strings.ToLower(name)]))
	}
	writeJSON(w, http.StatusOK, out)
}

// listIssueEvents lists an issue's events, oldest first.
func (f *fakeGitHub) listIssueEvents(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	th, ok := f.thread(w, r, docEvents+"#list-issue-events")
	if !ok {
		return
	}
	out := []jsonLabelEvent{}
	for _, e := range f.labelEvents {
		if e.number != th.number() {
			continue
		}
		j := jsonLabelEvent{ID: e.id, NodeID: "LE_" + strconv.FormatInt(e.id, 10),
			URL: f.apiURL("/issues/events/" + strconv.FormatInt(e.id, 10)), Actor: f.user(e.actor),
			Event: e.event, CreatedAt: e.at}
		j.Label.Name, j.Label.Color = e.label, "ededed"
		if l := f.labels[strings.ToLower(e.label)]; l != nil {
			j.Label.Color = l.color
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

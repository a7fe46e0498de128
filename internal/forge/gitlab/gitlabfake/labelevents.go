package gitlabfake

import (
	"net/http"
	"slices"
	"time"
)

// labelEvent is one resource label event of an issue: a label added or
// removed, by whom, when (https://docs.gitlab.com/api/resource_label_events/).
type labelEvent struct {
	id     int
	iid    int // the issue's
	action string
	label  string
	user   string
	at     time.Time
}

type labelEventJSON struct {
	ID           int      `json:"id"`
	User         userJSON `json:"user"`
	CreatedAt    stamp    `json:"created_at"`
	ResourceType string   `json:"resource_type"`
	ResourceID   int      `json:"resource_id"`
	Label        struct {
		ID          int    `json:"id"`
		Name        string `json:"name"`
		Color       string `json:"color"`
		TextColor   string `json:"text_color"`
		Description string `json:"description"`
	} `json:"label"`
	Action string `json:"action"`
}

// recordLabelsLocked records, as who, the labels is gained and lost
// since before.
func (s *Server) recordLabelsLocked(is *issue, who string, before []string) {
	for _, l := range is.labels {
		if !slices.Contains(before, l) {
			s.labelEvents = append(s.labelEvents, labelEvent{id: s.nextID(), iid: is.iid, action: "add",
				label: l, user: who, at: s.clock})
		}
	}
	for _, l := range before {
		if !slices.Contains(is.labels, l) {
			s.labelEvents = append(s.labelEvents, labelEvent{id: s.nextID(), iid: is.iid, action: "remove",
				label: l, user: who, at: s.clock})
		}
	}
}

// listIssueLabelEvents lists an issue's resource label events, oldest
// first.
func (s *Server) listIssueLabelEvents(w http.ResponseWriter, r *http.Request, iid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[iid-1]
	out := []labelEventJSON{}
	for _, e := range s.labelEvents {
		if e.iid != iid {
			continue
		}
		j := labelEventJSON{ID: e.id, User: s.userJSON(e.user), CreatedAt: stamp(e.at), ResourceType: "Issue",
			ResourceID: is.id, Action: e.action}
		j.Label.ID, j.Label.Name, j.Label.Color, j.Label.TextColor = slices.Index(s.labels, e.label)+1, e.label,
			"#6699cc", "#FFFFFF"
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

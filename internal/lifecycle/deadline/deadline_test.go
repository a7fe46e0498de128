package deadline

import (
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

var created = time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)

func obj(urgency string, status domain.Status, due *time.Time) *domain.Objective {
	return &domain.Objective{ObjectiveID: "obj-1", Urgency: urgency, Status: status, DueAt: due, CreatedAt: created}
}

func TestDefaultSLA(t *testing.T) {
	want := map[string]time.Duration{"CRITICAL": 4 * time.Hour, "HIGH": 24 * time.Hour, "NORMAL": 72 * time.Hour, "LOW": 168 * time.Hour}
	got := DefaultSLA()
	if len(got) != len(want) {
		t.Fatalf("DefaultSLA() = %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("DefaultSLA()[%s] = %v, want %v", k, got[k], v)
		}
	}
	got["LOW"] = time.Minute
	if DefaultSLA()["LOW"] != 168*time.Hour {
		t.Error("DefaultSLA returned a shared map")
	}
}

func TestDeadlineFromSLA(t *testing.T) {
	for _, tc := range []struct {
		urgency string
		sla     map[string]time.Duration
		want    time.Duration
	}{
		{"CRITICAL", nil, 4 * time.Hour},
		{"HIGH", nil, 24 * time.Hour},
		{"NORMAL", nil, 72 * time.Hour},
		{"LOW", nil, 168 * time.Hour},
		{"HIGH", map[string]time.Duration{"HIGH": time.Hour}, time.Hour},
		// A configured map without the urgency falls back to the default.
		{"LOW", map[string]time.Duration{"HIGH": time.Hour}, 168 * time.Hour},
		{"CRITICAL", map[string]time.Duration{"CRITICAL": 0}, 4 * time.Hour},
	} {
		got := Deadline(obj(tc.urgency, domain.StatusTodo, nil), tc.sla)
		if want := created.Add(tc.want); !got.Equal(want) {
			t.Errorf("Deadline(%s, %v) = %v, want %v", tc.urgency, tc.sla, got, want)
		}
	}
}

func TestDeadlineDueAtWins(t *testing.T) {
	due := created.Add(time.Minute)
	got := Deadline(obj("LOW", domain.StatusNew, &due), map[string]time.Duration{"LOW": time.Hour})
	if !got.Equal(due) {
		t.Fatalf("Deadline = %v, want due_at %v", got, due)
	}
}

func TestResolved(t *testing.T) {
	got := Resolved(map[string]time.Duration{"LOW": time.Hour, "UNKNOWN": time.Minute})
	want := map[string]time.Duration{"CRITICAL": 4 * time.Hour, "HIGH": 24 * time.Hour, "NORMAL": 72 * time.Hour, "LOW": time.Hour}
	if !maps.Equal(got, want) {
		t.Fatalf("Resolved = %v, want %v (each urgency of the schema, the defaults where unset, no other key)", got, want)
	}
}

func TestPauseID(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$`)
	d := created.Add(72 * time.Hour)
	a := PauseID("obj-1", d)
	if a != PauseID("obj-1", d.In(time.FixedZone("x", 3600))) {
		t.Error("PauseID depends on the time zone")
	}
	if a == PauseID("obj-1", d.Add(time.Microsecond)) {
		t.Error("PauseID ignores a moved deadline")
	}
	if a == PauseID("obj-2", d) {
		t.Error("PauseID ignores the objective")
	}
	long := strings.Repeat("x", 64)
	for _, id := range []string{a, PauseID(long, d), PauseID("A_b-9", time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC))} {
		if !pattern.MatchString(id) {
			t.Errorf("PauseID %q does not fit the id pattern", id)
		}
	}
}

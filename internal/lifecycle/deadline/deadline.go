// Package deadline says when an objective is due and whether it is overdue
// (docs/protocol/tasks.md#the-deadline-monitor). An objective's deadline is its
// due_at when set, else its created_at plus the SLA of its urgency.
package deadline

import (
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// Urgencies of an objective (objective.schema.json).
const (
	Critical = "CRITICAL"
	High     = "HIGH"
	Normal   = "NORMAL"
	Low      = "LOW"
)

var defaultSLA = map[string]time.Duration{
	Critical: 4 * time.Hour,
	High:     24 * time.Hour,
	Normal:   72 * time.Hour,
	Low:      168 * time.Hour,
}

// DefaultSLA returns the default time an objective of each urgency may take
// from created_at: CRITICAL 4h, HIGH 24h, NORMAL 72h, LOW 168h. The map is
// the caller's to change.
func DefaultSLA() map[string]time.Duration {
	m := make(map[string]time.Duration, len(defaultSLA))
	for k, v := range defaultSLA {
		m[k] = v
	}
	return m
}

// SLA returns the SLA of urgency in sla, falling back to the default when
// sla has none (or a non-positive one) for it. An unknown urgency takes
// NORMAL's.
func SLA(urgency string, sla map[string]time.Duration) time.Duration {
	if d, ok := sla[urgency]; ok && d > 0 {
		return d
	}
	if d, ok := defaultSLA[urgency]; ok {
		return d
	}
	if d, ok := sla[Normal]; ok && d > 0 {
		return d
	}
	return defaultSLA[Normal]
}

// Resolved is sla with SLA's answer for each urgency of the schema, for a
// store query that must not fall back on its own.
func Resolved(sla map[string]time.Duration) map[string]time.Duration {
	out := make(map[string]time.Duration, len(defaultSLA))
	for u := range defaultSLA {
		out[u] = SLA(u, sla)
	}
	return out
}

// Deadline is when o is due: its due_at when set, else its created_at plus
// the SLA of its urgency (sla, falling back to DefaultSLA for an urgency it
// does not name; nil means the defaults). The answer is UTC.
func Deadline(o *domain.Objective, sla map[string]time.Duration) time.Time {
	if o.DueAt != nil && !o.DueAt.IsZero() {
		return o.DueAt.UTC()
	}
	return o.CreatedAt.Add(SLA(o.Urgency, sla)).UTC()
}

// pauseTimeLayout renders a deadline inside a pause id: only characters the
// id pattern allows, microsecond precision (what the store keeps).
const pauseTimeLayout = "20060102T150405.000000Z"

// PauseID is the id of the one OVERDUE pause state of objectiveID for
// deadline: "overdue-<objective_id>-<deadline, UTC, microseconds>". The
// same (objective, deadline) always gives the same id, a moved deadline a
// new one. An objective id (at most 64 characters) keeps it within the
// schema's id pattern ^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$.
func PauseID(objectiveID string, deadline time.Time) string {
	return "overdue-" + objectiveID + "-" + deadline.UTC().Truncate(time.Microsecond).Format(pauseTimeLayout)
}

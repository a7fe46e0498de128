package config

import (
	"fmt"
	"slices"
	"strings"
)

// IntakeConfig is forge.intake (docs/forge.md): which of the repository's
// issues become work, and what they become. An issue enters when it
// matches any trigger that is set; with none set, no issue enters.
type IntakeConfig struct {
	// Label: an issue carrying this label enters ("azolla").
	Label string `mapstructure:"label" json:"label" yaml:"label"`
	// Assignee: an issue assigned to this user enters (azolla's account).
	Assignee string `mapstructure:"assignee" json:"assignee" yaml:"assignee"`
	// Mention: an issue whose text holds this word enters ("@azolla").
	Mention string `mapstructure:"mention" json:"mention" yaml:"mention"`
	// As is what an issue becomes: objective (the default), or capture,
	// for the triage track.
	As string `mapstructure:"as" json:"as" yaml:"as"`
	// AutoApproveWriters approves, without a command, the objective of an
	// issue whose author is trusted (forge.trusted). Anyone else's issue
	// waits for a trusted "/azolla approve".
	AutoApproveWriters bool `mapstructure:"auto_approve_writers" json:"auto_approve_writers" yaml:"auto_approve_writers"`
	// ApproveOnLabel approves the objective of an issue whose Label was
	// applied, after the last edit, by someone trusted: applying
	// it is approving. Anyone else's label only brings the issue in.
	ApproveOnLabel bool `mapstructure:"approve_on_label" json:"approve_on_label" yaml:"approve_on_label"`
}

// Intake kinds: what an issue becomes.
const (
	IntakeAsObjective = "objective"
	IntakeAsCapture   = "capture"
)

// Enabled says whether any issue may enter.
func (i IntakeConfig) Enabled() bool { return i.Label != "" || i.Assignee != "" || i.Mention != "" }

// Becomes is As, or its default.
func (i IntakeConfig) Becomes() string {
	if i.As == "" {
		return IntakeAsObjective
	}
	return i.As
}

// validate checks forge.intake at key.
func (i IntakeConfig) validate(key string, add func(key, format string, args ...any)) {
	if i.As != "" && !slices.Contains([]string{IntakeAsObjective, IntakeAsCapture}, i.As) {
		add(key+".as", "must be objective or capture, got %q", i.As)
	}
	if strings.ContainsAny(i.Label, ",\n\t") || (i.Label != "" && strings.TrimSpace(i.Label) == "") {
		add(key+".label", "must be a label name without commas, got %q", i.Label)
	}
	if i.Assignee != "" && (strings.ContainsAny(i.Assignee, " /\t\n@") || strings.TrimSpace(i.Assignee) == "") {
		add(key+".assignee", "must be a user name (no @), got %q", i.Assignee)
	}
	if i.Mention != "" && (len(strings.TrimSpace(i.Mention)) < 2 || strings.ContainsAny(i.Mention, " \t\n")) {
		add(key+".mention", "must be one word of at least 2 characters, e.g. @azolla, got %q", i.Mention)
	}
	if i.ApproveOnLabel && i.Label == "" {
		add(key+".approve_on_label", "needs a label: set forge.intake.label")
	}
	if i.ApproveOnLabel && i.Becomes() == IntakeAsCapture {
		add(key+".approve_on_label", "approves objectives, and as: capture makes none")
	}
	if !i.Enabled() && (i.As != "" || i.AutoApproveWriters) {
		add(key, "sets %s but no trigger: set label, assignee or mention", strings.Join(i.setFields(), " and "))
	}
}

func (i IntakeConfig) setFields() []string {
	var out []string
	if i.As != "" {
		out = append(out, "as")
	}
	if i.AutoApproveWriters {
		out = append(out, "auto_approve_writers")
	}
	return out
}

// String says the triggers, for logs and docs: "label azolla or mention @azolla".
func (i IntakeConfig) String() string {
	var t []string
	if i.Label != "" {
		t = append(t, "label "+i.Label)
	}
	if i.Assignee != "" {
		t = append(t, "assignee "+i.Assignee)
	}
	if i.Mention != "" {
		t = append(t, "mention "+i.Mention)
	}
	if len(t) == 0 {
		return "no trigger"
	}
	return fmt.Sprintf("%s, as %s", strings.Join(t, " or "), i.Becomes())
}

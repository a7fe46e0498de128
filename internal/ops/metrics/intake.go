package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metric names of the forge as front door (docs/forge.md).
const (
	NameIntake        = "azolla_intake_total"
	NameForgeCommands = "azolla_forge_commands_total"
)

// intakeSeries counts what came in from outside the CLI.
type intakeSeries struct {
	items    *prometheus.CounterVec
	commands *prometheus.CounterVec
}

func newIntakeSeries() *intakeSeries {
	return &intakeSeries{
		items: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameIntake,
			Help: "Items read from outside the CLI, by source (a forge's kind, or a posted document's source) and result: created (an objective or capture), exists (taken before), updated (a NEW objective's issue edited), closed, untrusted (an issue no trusted person stands behind, left out of triage), failed (tried again), refused (a document not taken)."},
			[]string{"source", "result"}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameForgeCommands,
			Help: "/azolla command comments by command and result: done, refused (the lifecycle or the argument said no), untrusted (the author may not steer azolla; answered, nothing changed), failed (tried again)."},
			[]string{"command", "result"}),
	}
}

// Intake counts one item read from source.
func (m *Metrics) Intake(source, result string) {
	if m == nil {
		return
	}
	m.intake.items.WithLabelValues(source, result).Inc()
}

// Command counts one command comment.
func (m *Metrics) Command(command, result string) {
	if m == nil {
		return
	}
	m.intake.commands.WithLabelValues(command, result).Inc()
}

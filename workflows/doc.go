// Package workflows will hold azolla's Temporal workflow definitions:
// deterministic code only, no I/O (the objective lifecycle, triage, manifest,
// track serializer, deadline monitor), with recorded histories in testdata/
// for replay tests. Empty until the lifecycle lands.
package workflows

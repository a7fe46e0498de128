// Package workers will hold the wiring of azolla's worker processes: which
// workflows and activities run on which task queue, and the polling bridge
// that starts lifecycles for objectives and events found in the store. Empty
// until the lifecycle lands.
package workers

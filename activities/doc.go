// Package activities will hold all I/O of a lifecycle step: the scheduler,
// runner and gate, each a method on one struct holding its dependencies (the
// store, the claim bridge, the diazotroph registry). Activities never import
// the workflow SDK package. Empty until the lifecycle lands.
package activities

package proc

// DrainTimeout lets the external tests bound how long a held pipe may delay
// Run.
const DrainTimeout = drainTimeout

package sandbox

// HasPidsCgroup lets tests see whether h puts runs in pids cgroups.
func HasPidsCgroup(h *Host) bool { return h.cgroups.has(controllerPids) }

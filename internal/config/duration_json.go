package config

import (
	"encoding/json"
	"fmt"
	"time"
)

// claimJSON is ClaimConfig with the TTL as a duration string, the form the
// config file and environment take, so `config show --output json` can be
// read back as configuration.
type claimJSON struct {
	LeaseTTL string `json:"lease_ttl"`
}

// MarshalJSON writes lease_ttl as a duration string such as "1m0s".
func (c ClaimConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(claimJSON{LeaseTTL: c.LeaseTTL.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *ClaimConfig) UnmarshalJSON(data []byte) error {
	var j claimJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	d, err := time.ParseDuration(j.LeaseTTL)
	if err != nil {
		return fmt.Errorf("claim.lease_ttl: %w", err)
	}
	c.LeaseTTL = d
	return nil
}

// lifecycleJSON is LifecycleConfig with its durations as strings, for the
// same reason as claimJSON.
type lifecycleJSON struct {
	Diazotroph   string `json:"diazotroph"`
	Budget       string `json:"budget"`
	PollInterval string `json:"poll_interval"`
}

// MarshalJSON writes the durations as strings such as "10m0s".
func (c LifecycleConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(lifecycleJSON{Diazotroph: c.Diazotroph, Budget: c.Budget.String(),
		PollInterval: c.PollInterval.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *LifecycleConfig) UnmarshalJSON(data []byte) error {
	var j lifecycleJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	budget, err := time.ParseDuration(j.Budget)
	if err != nil {
		return fmt.Errorf("lifecycle.budget: %w", err)
	}
	poll, err := time.ParseDuration(j.PollInterval)
	if err != nil {
		return fmt.Errorf("lifecycle.poll_interval: %w", err)
	}
	*c = LifecycleConfig{Diazotroph: j.Diazotroph, Budget: budget, PollInterval: poll}
	return nil
}

// repositoryJSON is RepositoryConfig with its budget as a string, for the
// same reason as claimJSON.
type repositoryJSON struct {
	Repository   string   `json:"repository"`
	GateCommands []string `json:"gate_commands"`
	GateBudget   string   `json:"gate_budget"`
	PushRemote   string   `json:"push_remote"`
}

// MarshalJSON writes gate_budget as a duration string.
func (r RepositoryConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(repositoryJSON{Repository: r.Repository, GateCommands: r.GateCommands,
		GateBudget: r.GateBudget.String(), PushRemote: r.PushRemote})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *RepositoryConfig) UnmarshalJSON(data []byte) error {
	var j repositoryJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	budget, err := time.ParseDuration(j.GateBudget)
	if err != nil {
		return fmt.Errorf("patch.repositories.gate_budget: %w", err)
	}
	*r = RepositoryConfig{Repository: j.Repository, GateCommands: j.GateCommands, GateBudget: budget,
		PushRemote: j.PushRemote}
	return nil
}

// controlPlaneJSON is ControlPlaneConfig with its durations as strings, for
// the same reason as claimJSON.
type controlPlaneJSON struct {
	Address           string   `json:"address"`
	CertFile          string   `json:"cert_file"`
	KeyFile           string   `json:"key_file"`
	RedisURL          string   `json:"redis_url"`
	LeaseTTL          string   `json:"lease_ttl"`
	HeartbeatInterval string   `json:"heartbeat_interval"`
	MaxAttempts       int      `json:"max_attempts"`
	ReaperInterval    string   `json:"reaper_interval"`
	MaxWait           string   `json:"max_wait"`
	RemoteDiazotrophs []string `json:"remote_diazotrophs"`
}

// MarshalJSON writes the durations as strings such as "1m0s".
func (c ControlPlaneConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(controlPlaneJSON{Address: c.Address, CertFile: c.CertFile, KeyFile: c.KeyFile,
		RedisURL: c.RedisURL, LeaseTTL: c.LeaseTTL.String(), HeartbeatInterval: c.HeartbeatInterval.String(),
		MaxAttempts: c.MaxAttempts, ReaperInterval: c.ReaperInterval.String(), MaxWait: c.MaxWait.String(),
		RemoteDiazotrophs: c.RemoteDiazotrophs})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *ControlPlaneConfig) UnmarshalJSON(data []byte) error {
	var j controlPlaneJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	out := ControlPlaneConfig{Address: j.Address, CertFile: j.CertFile, KeyFile: j.KeyFile, RedisURL: j.RedisURL,
		MaxAttempts: j.MaxAttempts, RemoteDiazotrophs: j.RemoteDiazotrophs}
	if err := parseDurations("control_plane",
		durationField{"lease_ttl", j.LeaseTTL, &out.LeaseTTL},
		durationField{"heartbeat_interval", j.HeartbeatInterval, &out.HeartbeatInterval},
		durationField{"reaper_interval", j.ReaperInterval, &out.ReaperInterval},
		durationField{"max_wait", j.MaxWait, &out.MaxWait},
	); err != nil {
		return err
	}
	*c = out
	return nil
}

// durationField is one duration of a section's JSON form: its key, the
// string read, and where its value goes.
type durationField struct {
	key string
	s   string
	to  *time.Duration
}

// parseDurations parses each field in turn, naming section.key in an error.
func parseDurations(section string, fields ...durationField) error {
	for _, f := range fields {
		v, err := time.ParseDuration(f.s)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", section, f.key, err)
		}
		*f.to = v
	}
	return nil
}

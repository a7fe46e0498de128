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

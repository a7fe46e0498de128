package config

import (
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// MarshalJSON writes the configuration as its YAML form does, each key once
// and every duration as a string ("1m30s"), the form the configuration file
// and environment take: the JSON can be read back as a configuration file.
// Going through YAML keeps one spelling of the keys (the yaml tags) for both.
func (c Config) MarshalJSON() ([]byte, error) {
	y, err := yaml.Marshal(c)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		return nil, fmt.Errorf("read the configuration's YAML back: %w", err)
	}
	return json.Marshal(doc)
}

// UnmarshalJSON reads what MarshalJSON writes (JSON is YAML, and the YAML
// decoder takes durations as strings), on top of what c holds.
func (c *Config) UnmarshalJSON(data []byte) error {
	type plain Config // without these methods
	if err := yaml.Unmarshal(data, (*plain)(c)); err != nil {
		return fmt.Errorf("read the configuration's JSON: %w", err)
	}
	return nil
}

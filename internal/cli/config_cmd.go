package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

func (a *app) configCmd() *cobra.Command {
	return groupCmd("config", "Inspect the configuration", a.configShowCmd())
}

func (a *app) configShowCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration, secrets masked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "yaml" && output != "json" {
				return usageError(fmt.Errorf(`--output must be "yaml" or "json", got %q`, output))
			}
			cfg, err := a.loadConfig(cmd.Flags())
			if err != nil {
				return err
			}
			masked := cfg.Masked()
			var out []byte
			if output == "json" {
				out, err = json.MarshalIndent(masked, "", "  ")
				out = append(out, '\n')
			} else {
				out, err = yaml.Marshal(masked)
			}
			if err != nil {
				return fmt.Errorf("encode configuration as %s: %w", output, err)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", `output format: "yaml" or "json"`)
	return cmd
}

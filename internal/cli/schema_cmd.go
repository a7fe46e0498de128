package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/schemas"
)

func (a *app) schemaCmd() *cobra.Command {
	return groupCmd("schema", "List, show and check the record JSON Schemas",
		a.schemaListCmd(), a.schemaShowCmd(), a.schemaValidateCmd())
}

func (a *app) schemaListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the record kinds, one per line",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, k := range schemas.Kinds() {
				if _, err := fmt.Fprintln(cmd.OutOrStdout(), k); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func (a *app) schemaShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show KIND",
		Short: "Print the JSON Schema of a record kind",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := parseKind(args[0])
			if err != nil {
				return err
			}
			src, err := schemas.Source(kind)
			if err != nil {
				return fmt.Errorf("read schema %s: %w", kind, err)
			}
			_, err = cmd.OutOrStdout().Write(src)
			return err
		},
	}
}

func (a *app) schemaValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate KIND FILE...",
		Short: "Check JSON files against the schema of a record kind",
		Long: `Check each JSON file against the schema of KIND. Prints "ok  FILE" for a
valid file and "FILE: <error>" for an invalid one, the error naming the JSON
pointer of each violation. Exits 1 if any file is invalid or unreadable.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := parseKind(args[0])
			if err != nil {
				return err
			}
			files := args[1:]
			bad := 0
			out := cmd.OutOrStdout()
			for _, f := range files {
				if err := validateFile(kind, f); err != nil {
					bad++
					fmt.Fprintf(out, "%s: %s\n", f, oneLine(err.Error()))
					continue
				}
				fmt.Fprintf(out, "ok  %s\n", f)
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d file(s) not valid %s", bad, len(files), kind)
			}
			return nil
		},
	}
}

func validateFile(kind schemas.Kind, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		// The line already starts with the path; drop the repeat from PathError.
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("read: %w", pe.Err)
		}
		return fmt.Errorf("read: %w", err)
	}
	return schemas.ValidateJSON(kind, data)
}

// parseKind maps an unknown kind to a usage error; the schemas error lists
// the valid kinds.
func parseKind(s string) (schemas.Kind, error) {
	k, err := schemas.ParseKind(s)
	if err != nil {
		return "", usageError(err)
	}
	return k, nil
}

package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/runreport"
)

func TestPatchCommandPreset_UnknownNameListsTheValidOnes(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Patch.Command.Preset = "cursor"
	require.ErrorContains(t, c.Validate(),
		`patch.command.preset: unknown agent preset "cursor" (valid presets: aider, claude-code, codex)`)
}

func TestPatchCommandPreset_StandsInForRun(t *testing.T) {
	t.Parallel()
	for _, p := range runreport.Presets() {
		t.Run(string(p.Name), func(t *testing.T) {
			t.Parallel()
			c := valid()
			c.Patch.Generator, c.Patch.Command.Run, c.Patch.Command.Preset = config.GeneratorCommand, "", string(p.Name)
			require.NoError(t, c.Validate())
			require.Equal(t, p.Command, c.Patch.Command.CommandLine())

			c.Patch.Command.Run = "my-agent --fast"
			require.Equal(t, "my-agent --fast", c.Patch.Command.CommandLine(), "an explicit run wins")
		})
	}
}

func TestPatchCommandRun_RequiredWithoutPreset(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Patch.Generator, c.Patch.Command.Run = config.GeneratorCommand, ""
	require.ErrorContains(t, c.Validate(), `patch.command.run: must be a command line when patch.generator is "command"`)
	require.Equal(t, "", c.Patch.Command.CommandLine())
}

func TestTranscriptMax_DefaultsAndRefusesNegative(t *testing.T) {
	t.Parallel()
	require.Equal(t, 1<<20, config.Default().Executor.TranscriptMax)
	c := valid()
	c.Executor.TranscriptMax = -1
	require.ErrorContains(t, c.Validate(), `executor.transcript_max: must not be negative (0 keeps no transcript), got -1`)
}

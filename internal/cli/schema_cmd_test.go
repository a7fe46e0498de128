package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/schemas"
)

const testdata = "../../schemas/testdata"

func TestSchemaListPrintsEveryKind(t *testing.T) {
	t.Parallel()
	res := azolla(t, nil, "schema", "list")
	require.Equal(t, 0, res.code, res.stderr)
	var want []string
	for _, k := range schemas.Kinds() {
		want = append(want, string(k))
	}
	require.Equal(t, strings.Join(want, "\n")+"\n", res.stdout)
}

func TestSchemaShowPrintsTheSource(t *testing.T) {
	t.Parallel()
	res := azolla(t, nil, "schema", "show", "objective")
	require.Equal(t, 0, res.code, res.stderr)
	src, err := schemas.Source(schemas.Objective)
	require.NoError(t, err)
	require.Equal(t, string(src), res.stdout)
	require.True(t, json.Valid([]byte(res.stdout)))
}

func TestSchemaValidateAcceptsEveryValidFixture(t *testing.T) {
	t.Parallel()
	for _, kind := range schemas.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			files, err := filepath.Glob(filepath.Join(testdata, string(kind), "valid*.json"))
			require.NoError(t, err)
			require.NotEmpty(t, files, "no valid fixtures for %s", kind)
			res := azolla(t, nil, append([]string{"schema", "validate", string(kind)}, files...)...)
			require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			for _, f := range files {
				require.Contains(t, res.stdout, "ok  "+f+"\n")
			}
		})
	}
}

func TestSchemaValidateRefusesEachInvalidFixtureNamingFileAndPointer(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(testdata, "*", "invalid_*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		kind := filepath.Base(filepath.Dir(f))
		t.Run(kind+"/"+filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			res := azolla(t, nil, "schema", "validate", kind, f)
			require.Equal(t, 1, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			require.Regexp(t, `^`+regexpQuote(f)+`: invalid `+kind+`: /\S*: `, res.stdout)
			require.Equal(t, "azolla: 1 of 1 file(s) not valid "+kind+"\n", res.stderr)
		})
	}
}

func TestSchemaValidateReportsEveryFileAndFailsIfAnyIsBad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	valid := filepath.Join(testdata, "objective", "valid.json")
	notJSON := writeFile(t, dir, "broken.json", "{")
	missing := filepath.Join(dir, "missing.json")
	res := azolla(t, nil, "schema", "validate", "objective", valid, notJSON, missing)
	require.Equal(t, 1, res.code)
	lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	require.Len(t, lines, 3, res.stdout)
	require.Equal(t, "ok  "+valid, lines[0])
	require.True(t, strings.HasPrefix(lines[1], notJSON+": "), lines[1])
	require.Equal(t, missing+": read: "+syscall.ENOENT.Error(), lines[2])
	require.Equal(t, "azolla: 2 of 3 file(s) not valid objective\n", res.stderr)
}

func TestSchemaUnknownKindIsAUsageErrorListingKinds(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"schema", "validate", "widget", "x.json"},
		{"schema", "show", "widget"},
	} {
		res := azolla(t, nil, args...)
		require.Equal(t, 2, res.code, "%v", args)
		require.Contains(t, res.stderr, `azolla: unknown schema kind "widget" (valid kinds: `)
		for _, k := range schemas.Kinds() {
			require.Contains(t, res.stderr, string(k))
		}
	}
}

func regexpQuote(s string) string {
	return strings.NewReplacer(".", `\.`, "/", `/`).Replace(s)
}

package storetest

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A journal read back holds what its process ended, with its outcomes,
// and what it begun and never ended as unknown; what it dropped, and a
// last line cut short by a kill, are left out.
func TestJournal_LoadsWhatAKilledProcessLeft(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "journal")
	j, err := Journal(path)
	require.NoError(t, err)
	acq := ClaimInput{Kind: OpAcquire, Resource: "WORKORDER/wo-1", Owner: "w1"}
	j.record("w1", acq, j.now(), ClaimOutput{OK: true, Version: 1})
	j.begin("w1", ClaimInput{Kind: OpFenced, Resource: "WORKORDER/wo-1", Owner: "w1", Version: 1}, j.now())
	j.drop(j.begin("w1", ClaimInput{Kind: OpRenew, Resource: "WORKORDER/wo-1", Owner: "w1", Version: 1}, j.now()))
	j.begin("", OutcomeInput{Rule: RuleBundle, Key: "wo-1", Value: "OK a"}, j.now())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"op":"end","id":1,"ret":`) // killed mid-line
	require.NoError(t, err)
	require.NoError(t, f.Close())

	h := NewHistory()
	refused := acq
	refused.Owner = "w2"
	h.record("w2", refused, h.now(), ClaimOutput{})
	require.NoError(t, h.Load(path))
	ops := h.Operations()
	require.Len(t, ops, 3)
	byKind := map[string]ClaimOutput{}
	for _, op := range ops {
		in := op.Input.(ClaimInput)
		byKind[in.Owner+" "+in.Kind] = op.Output.(ClaimOutput)
		if op.Output.(ClaimOutput).Unknown {
			require.Equal(t, int64(math.MaxInt64), op.Return)
		}
	}
	require.Equal(t, map[string]ClaimOutput{"w2 acquire": {}, "w1 acquire": {OK: true, Version: 1},
		"w1 fenced": {Unknown: true}}, byKind)
	require.Equal(t, 2, h.Answered())
	outs := h.Outcomes()
	require.Len(t, outs, 1)
	require.Equal(t, OutcomeOutput{Unknown: true}, outs[0].Output)

	// A line cut short anywhere but last is a broken journal.
	require.NoError(t, os.WriteFile(path, []byte("{\"op\":\n{\"op\":\"drop\",\"id\":0}\n"), 0o600))
	require.ErrorContains(t, NewHistory().Load(path), "line 1")
}

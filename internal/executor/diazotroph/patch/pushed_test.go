package patch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
)

func TestCheck_VerdictSaysWhetherTheBranchWasPushed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		remote   string // "bare": a local bare repository; "missing": a path with none
		gate     []string
		pass     bool
		unpushed bool
	}{
		{"no push remote", "", nil, true, true},
		{"no push remote, gate fails", "", []string{"exit 1"}, false, true},
		{"pushed", "bare", nil, true, false},
		{"pushed, gate fails", "bare", []string{"exit 1"}, false, false},
		{"push failed", "missing", nil, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			switch tc.remote {
			case "bare":
				tb.settings.PushRemote = filepath.Join(tb.root, "remote.git")
				git(t, tb.root, "init", "-q", "--bare", tb.settings.PushRemote)
			case "missing":
				tb.settings.PushRemote = filepath.Join(tb.root, "no-such-remote.git")
			}
			tb.settings.GateCommands, tb.settings.GateBudget = tc.gate, time.Minute
			c := executed(t, tb)
			v, err := tb.p.Check(context.Background(), c)
			require.NoError(t, err)
			require.Equal(t, tc.pass, v.Pass, v.Reason)
			require.Equal(t, tc.unpushed, v.Unpushed)

			m, ok, err := patch.ReadPushed(tb.gitDir, c.WorkOrder.WorkOrderID)
			require.NoError(t, err)
			require.Equal(t, !tc.unpushed, ok, "a marker exists exactly when the push succeeded")
			if ok {
				require.Equal(t, c.Bundle.Metadata.CommitSHA, m.CommitSHA)
				require.Equal(t, "azolla/gated", m.BranchName)
				require.Equal(t, m.CommitSHA, strings.TrimSpace(git(t, tb.settings.PushRemote, "rev-parse", "refs/heads/azolla/gated")))
			}
		})
	}
}

func TestExecute_ARerunWhosePushFailsForgetsTheEarlierPush(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.settings.PushRemote = filepath.Join(tb.root, "remote.git")
	git(t, tb.root, "init", "-q", "--bare", tb.settings.PushRemote)
	c := executed(t, tb)
	_, ok, err := patch.ReadPushed(tb.gitDir, c.WorkOrder.WorkOrderID)
	require.NoError(t, err)
	require.True(t, ok)

	// The same workorder runs again (its worker died before the bundle was
	// written) with another patch, and its push fails this time.
	require.NoError(t, os.RemoveAll(tb.settings.PushRemote))
	req := tb.request(t, "gated", strings.Replace(goodPatch, "world", "there", 1))
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Contains(t, res.Notes, "Push of azolla/gated")
	require.NotEqual(t, c.Bundle.Metadata.CommitSHA, res.Metadata.CommitSHA)
	_, ok, err = patch.ReadPushed(tb.gitDir, req.WorkOrder.WorkOrderID)
	require.NoError(t, err)
	require.False(t, ok, "the marker of the first push is gone")

	c.Bundle.Metadata = res.Metadata
	v, err := tb.p.Check(context.Background(), c)
	require.NoError(t, err)
	require.True(t, v.Unpushed)
}

func TestOwners_ReadsEveryNameThePatchDiazotrophWrites(t *testing.T) {
	t.Parallel()
	ws := func(id string) patch.Owner { return patch.Owner{WorkOrderID: id, Kind: patch.RunnerWorkspace} }
	gate := func(id string) patch.Owner { return patch.Owner{WorkOrderID: id, Kind: patch.GateWorkspace} }
	tmp := func(id string) patch.Owner { return patch.Owner{WorkOrderID: id, Kind: patch.TempClone} }
	cand := func(id string) patch.Owner { return patch.Owner{WorkOrderID: id, Kind: patch.CandidateWorkspace} }
	for name, want := range map[string][]patch.Owner{
		"wo-a-2":                   {ws("wo-a-2")},
		"wo-a-2.gate":              {ws("wo-a-2.gate"), gate("wo-a-2")},
		".wo-a-2.tmp-123":          {tmp("wo-a-2")},
		".wo-a-2.gate.tmp-456":     {tmp("wo-a-2.gate"), tmp("wo-a-2")},
		".hidden":                  nil,
		".tmp-1":                   nil,
		"":                         nil,
		".gate":                    nil,
		"wo.tmp-1":                 {ws("wo.tmp-1")},
		".wo-a-2.tmp-1.tmp-2":      {tmp("wo-a-2.tmp-1")},
		"wo-a-2.gate.gate":         {ws("wo-a-2.gate.gate"), gate("wo-a-2.gate")},
		".azolla-unrelated.tmp-99": {tmp("azolla-unrelated")},
		"wo-a-2-c3":                {ws("wo-a-2-c3"), cand("wo-a-2")},
		"wo-a-2-c12":               {ws("wo-a-2-c12"), cand("wo-a-2")},
		".wo-a-2-c1.tmp-7":         {tmp("wo-a-2-c1"), tmp("wo-a-2")},
		"wo-a-2-c0":                {ws("wo-a-2-c0")},
		"wo-a-2-c01":               {ws("wo-a-2-c01")},
		"wo-a-2-cx":                {ws("wo-a-2-cx")},
		"wo-a-2-c":                 {ws("wo-a-2-c")},
		"-c1":                      {ws("-c1")},
	} {
		require.Equal(t, want, patch.Owners(name), name)
	}
}

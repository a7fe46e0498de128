package sqlstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestClaimRows_SeenRowIsKnownUntilItsTrustLapses(t *testing.T) {
	t.Parallel()
	r, k := newClaimRows(), claimKey{"EVENT", "ev-1"}
	require.False(t, r.known(k), "a row never seen is not known")
	r.saw(k)
	require.True(t, r.known(k))
	require.False(t, r.known(claimKey{"WORKORDER", "ev-1"}), "the key is type and id")
	r.seen[k] = time.Now().Add(-claimRowTrust)
	require.False(t, r.known(k), "a row seen claimRowTrust ago may have been deleted since")
}

func TestClaimRows_FullMemoryForgetsAll(t *testing.T) {
	t.Parallel()
	r := &claimRows{limit: 2}
	r.saw(claimKey{"EVENT", "a"})
	r.saw(claimKey{"EVENT", "b"})
	r.saw(claimKey{"EVENT", "c"})
	require.False(t, r.known(claimKey{"EVENT", "a"}))
	require.True(t, r.known(claimKey{"EVENT", "c"}))
}

func TestClaimRows_NilRemembersNothing(t *testing.T) {
	t.Parallel()
	var r *claimRows
	r.saw(claimKey{"EVENT", "a"})
	require.False(t, r.known(claimKey{"EVENT", "a"}))
}

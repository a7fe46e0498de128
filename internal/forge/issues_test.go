package forge_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

func TestLastLabelled_TheLastApplyingWinsAndARemovalAfterItLeavesNoOne(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	history := []forge.LabelEvent{
		{Label: "azolla", Added: true, User: "rita", At: at(1)},
		{Label: "bug", Added: true, User: "mallory", At: at(2)},
		{Label: "Azolla", Added: true, User: "ana", At: at(3)},
		{Label: "bug", Added: false, User: "ana", At: at(4)},
	}
	user, when := forge.LastLabelled(history, "AZOLLA")
	require.Equal(t, "ana", user, "names compare without regard to case")
	require.Equal(t, at(3), when)
	user, when = forge.LastLabelled(history, "bug")
	require.Empty(t, user, "removed after it was applied")
	require.True(t, when.IsZero())
	user, _ = forge.LastLabelled(history, "never")
	require.Empty(t, user)
}

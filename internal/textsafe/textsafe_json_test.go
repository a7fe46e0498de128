package textsafe_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/textsafe"
)

// Encoded JSON keeps its value and loses the raw characters a terminal
// would obey.
func TestJSON_EscapesWhatEncodingJSONLeavesRaw(t *testing.T) {
	t.Parallel()
	in := map[string]string{"title": "a\u202eb\u0085c\u007fd\x1be é"}
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	require.Contains(t, string(raw), "\u202e", "encoding/json leaves it raw")
	safe := textsafe.JSON(raw)
	for _, r := range string(safe) {
		require.False(t, r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e, "raw %U in %s", r, safe)
	}
	var back map[string]string
	require.NoError(t, json.Unmarshal(safe, &back))
	require.Equal(t, in, back, "the same value")
	plain := []byte(`{"title":"plain é"}`)
	require.Equal(t, plain, textsafe.JSON(plain))
}

package strictjson_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/strictjson"
)

type doc struct {
	A int `json:"a"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want error // nil: accepted
		msg  string
	}{
		{in: `{"a":1}`},
		{in: " {\"a\":1}\n\t"},
		{in: ``, want: strictjson.ErrEmpty},
		{in: "  \n", want: strictjson.ErrEmpty},
		// json.Decoder.More misses the first two: they are why this exists.
		{in: `{"a":1}}`, want: strictjson.ErrTrailingData},
		{in: `{"a":1}]`, want: strictjson.ErrTrailingData},
		{in: `{"a":1} {"a":2}`, want: strictjson.ErrTrailingData},
		{in: `{"a":1} x`, want: strictjson.ErrTrailingData},
		{in: `{"a":1,"b":2}`, msg: `unknown field "b"`},
		{in: `{"a":`, want: io.ErrUnexpectedEOF},
		{in: `{"a":"x"}`, msg: "cannot unmarshal"},
	} {
		var d doc
		err := strictjson.Decode(strings.NewReader(tt.in), &d)
		switch {
		case tt.want == nil && tt.msg == "":
			require.NoError(t, err, "%q", tt.in)
			require.Equal(t, 1, d.A)
		case tt.want != nil:
			require.True(t, errors.Is(err, tt.want), "%q: got %v, want %v", tt.in, err, tt.want)
		default:
			require.ErrorContains(t, err, tt.msg, "%q", tt.in)
		}
	}
}

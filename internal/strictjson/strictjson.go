// Package strictjson decodes untrusted JSON documents strictly: one value,
// no unknown fields, nothing after it. Every reader of a document that
// crosses a trust boundary (a worker's request, the control plane's answer,
// a job's payload, a snapshot's input) decodes through it, so "strict"
// means the same everywhere.
//
// json.Decoder.More is not a check for trailing data: after a top-level
// value it reports false for a stray '}' or ']'. Decode asks for the next
// token instead, which must be the end of the input.
package strictjson

import (
	"encoding/json"
	"errors"
	"io"
)

// Sentinels for the two ways a document is refused besides its content.
var (
	// ErrEmpty: the input holds no JSON value at all.
	ErrEmpty = errors.New("no JSON value")
	// ErrTrailingData: something follows the one JSON value.
	ErrTrailingData = errors.New("data after the JSON value")
)

// Decode reads exactly one JSON value from r into v, refusing fields v does
// not have. A decoding error is returned as encoding/json gave it (so
// io.ErrUnexpectedEOF still tells a cut-off input).
func Decode(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return ErrEmpty
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ErrTrailingData
	}
	return nil
}

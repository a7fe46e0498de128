package diazotroph

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/azolla/azolla/internal/strictjson"
)

// EncodeInput returns in as a snapshot's full_prompt_text, once check
// accepts it. The diazotrophs whose input is a JSON document (manifest,
// triage) share it, so a snapshot is written and read the same way.
func EncodeInput[T any](in T, check func(T) error) (string, error) {
	if err := check(in); err != nil {
		return "", err
	}
	b, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("encode %T: %w", in, err)
	}
	return string(b), nil
}

// DecodeInput reads a T from a snapshot's full_prompt_text, refusing unknown
// fields and trailing data with an error that wraps invalid, then has check
// judge it.
func DecodeInput[T any](text string, invalid error, check func(T) error) (T, error) {
	var in, zero T
	if err := strictjson.Decode(strings.NewReader(text), &in); err != nil {
		return zero, fmt.Errorf("%w: %v", invalid, err)
	}
	if err := check(in); err != nil {
		return zero, err
	}
	return in, nil
}

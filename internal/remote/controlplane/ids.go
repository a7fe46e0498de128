package controlplane

import (
	"crypto/rand"
	"encoding/base64"

	"github.com/google/uuid"
)

// newUUID returns a random (version 4) UUID in canonical lowercase form.
func newUUID() string { return uuid.NewString() }

// newLeaseToken returns 256 random bits, base64url without padding.
func newLeaseToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

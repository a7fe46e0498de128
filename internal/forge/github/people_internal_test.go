package github

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

// GitHub's answer is role_name and the legacy permission beside it; the
// role decides when it is one of GitHub's own.
func TestPermission_MapsGitHubsAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		roleName, legacy string
		want             forge.Permission
	}{
		{"admin", "admin", forge.PermissionAdmin},
		{"maintain", "write", forge.PermissionMaintain},
		{"write", "write", forge.PermissionWrite},
		{"triage", "read", forge.PermissionRead},
		{"read", "read", forge.PermissionRead},
		// Custom roles: the base role they come down to.
		{"release-manager", "write", forge.PermissionWrite},
		{"security-auditor", "read", forge.PermissionRead},
		{"org-admin-like", "admin", forge.PermissionAdmin},
		// GitHub answers a non-collaborator this way too, not only 404.
		{"", "none", forge.PermissionNone},
		// A GitHub Enterprise Server older than role_name.
		{"", "write", forge.PermissionWrite},
	} {
		t.Run(tc.roleName+"/"+tc.legacy, func(t *testing.T) {
			t.Parallel()
			got, err := permission(tc.roleName, tc.legacy)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestPermission_AnAnswerNeitherFieldExplainsIsAnError(t *testing.T) {
	t.Parallel()
	got, err := permission("custodian", "superuser")
	require.ErrorContains(t, err, `"custodian"`)
	require.ErrorContains(t, err, `"superuser"`)
	require.Equal(t, forge.PermissionNone, got)
}

package github_test

import (
	"testing"

	"github.com/azolla/azolla/internal/forge/forgetest"
)

func TestConformance(t *testing.T) {
	forgetest.Exercise(t, newHarness(""))
}

func TestConformance_GitHubEnterpriseServer(t *testing.T) {
	forgetest.Exercise(t, newHarness("/api/v3"))
}

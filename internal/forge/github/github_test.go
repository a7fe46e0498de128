package github_test

import (
	"testing"

	"github.com/azolla/azolla/internal/forge/forgetest"
	"github.com/azolla/azolla/workers/intake/intaketest"
)

func TestConformance(t *testing.T) {
	forgetest.Exercise(t, newHarness(""))
}

// The forge intake's suite, through the same harness.
func TestConformance_Intake(t *testing.T) {
	intaketest.Exercise(t, newHarness(""))
}

func TestConformance_GitHubEnterpriseServer(t *testing.T) {
	forgetest.Exercise(t, newHarness("/api/v3"))
}

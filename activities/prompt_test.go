package activities_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
)

func TestPrompt_CarriesTheDescriptionBetweenTitleAndCriteria(t *testing.T) {
	t.Parallel()
	o := &domain.Objective{ObjectiveID: "widgets-12-3f9a1c", ObjectiveType: "TICKET", Urgency: "NORMAL",
		Title: "Login fails on Safari", Description: "Steps:\n1. open /login", AcceptanceCriteria: []string{"works on Safari"}}
	p := activities.Prompt(o, nil, nil)
	require.Contains(t, p, "Login fails on Safari\n\nDescription:\nSteps:\n1. open /login\n\nAcceptance criteria:\n- works on Safari\n")
	o.Description = ""
	require.NotContains(t, activities.Prompt(o, nil, nil), "Description:")
}

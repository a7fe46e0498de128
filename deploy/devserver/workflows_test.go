package devserver_test

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/workflow"
)

// Names shared by the test workflows and the tests that drive them.
const (
	// greetUpdate sets the greeting greetWorkflow waits for.
	greetUpdate = "set-greeting"
	// resumeSignal releases waitForSignalWorkflow.
	resumeSignal = "resume"
	// stateQuery answers once a worker has run the workflow's first task.
	stateQuery = "state"
)

// greetWorkflow waits for a greeting sent by Update, then builds the message
// in an activity.
func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	greeting := ""
	err := workflow.SetUpdateHandlerWithOptions(ctx, greetUpdate,
		func(_ workflow.Context, g string) (string, error) {
			greeting = g
			return "accepted " + g, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, g string) error {
			if g == "" {
				return errors.New("empty greeting")
			}
			return nil
		}},
	)
	if err != nil {
		return "", err
	}
	if err := workflow.Await(ctx, func() bool { return greeting != "" }); err != nil {
		return "", err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var msg string
	err = workflow.ExecuteActivity(ctx, composeGreeting, greeting, name).Get(ctx, &msg)
	return msg, err
}

func composeGreeting(_ context.Context, greeting, name string) (string, error) {
	return greeting + ", " + name, nil
}

// waitForSignalWorkflow blocks until resumeSignal and joins its input with
// the signal's payload.
func waitForSignalWorkflow(ctx workflow.Context, before string) (string, error) {
	err := workflow.SetQueryHandler(ctx, stateQuery, func() (string, error) { return "waiting", nil })
	if err != nil {
		return "", err
	}
	var after string
	workflow.GetSignalChannel(ctx, resumeSignal).Receive(ctx, &after)
	return before + " " + after, nil
}

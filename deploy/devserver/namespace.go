package devserver

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// prepareNamespace waits until the frontend serves the namespace, then makes
// sure the wanted custom search attributes are registered in it.
func prepareNamespace(ctx context.Context, frontend, namespace string, want map[string]enums.IndexedValueType) error {
	conn, err := grpc.NewClient(frontend, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connect to frontend %s: %w", frontend, err)
	}
	defer conn.Close()

	if err := waitForNamespace(ctx, workflowservice.NewWorkflowServiceClient(conn), namespace); err != nil {
		return err
	}
	return registerSearchAttributes(ctx, operatorservice.NewOperatorServiceClient(conn), namespace, want)
}

// waitForNamespace polls DescribeNamespace: the server's Start returns before
// every service answers, and this is the first call a user would make.
func waitForNamespace(ctx context.Context, ws workflowservice.WorkflowServiceClient, namespace string) error {
	for {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := ws.DescribeNamespace(attempt, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for namespace %q: %w (last error: %w)", namespace, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// registerSearchAttributes adds the attributes the namespace lacks. Attributes
// that already exist with the same type are left alone, so starting again on
// the same database succeeds; one that exists with another type is an error.
func registerSearchAttributes(ctx context.Context, ops operatorservice.OperatorServiceClient, namespace string, want map[string]enums.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of %q: %w", namespace, err)
	}
	missing := map[string]enums.IndexedValueType{}
	for name, typ := range want {
		if _, ok := have.GetSystemAttributes()[name]; ok {
			return fmt.Errorf("search attribute %s: name is reserved by Temporal", name)
		}
		existing, ok := have.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
		case existing != typ:
			return fmt.Errorf("search attribute %s exists in %q as %s, want %s", name, namespace, existing, typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	})
	if err != nil {
		return fmt.Errorf("add search attributes to %q: %w", namespace, err)
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"

	"go.temporal.io/server/common/config"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// frontendTLS reads the temporalio/server image's frontend TLS variables:
//
//	TEMPORAL_TLS_FRONTEND_CERT, _KEY   the frontend's certificate; TLS is on
//	                                   when they are set
//	TEMPORAL_TLS_REQUIRE_CLIENT_AUTH   true: clients must present a
//	                                   certificate signed by
//	TEMPORAL_TLS_CLIENT1_CA_CERT       (mTLS)
//	TEMPORAL_TLS_SERVER_CA_CERT        the CA the server's own system workers
//	                                   verify the frontend with, under the name
//	TEMPORAL_TLS_FRONTEND_SERVER_NAME
//
// The system workers present the frontend's certificate as their client
// certificate, as the image's template has them do, so under mTLS it must
// also be valid for client authentication. Internode traffic stays
// plaintext: every service of this server runs in one process on loopback.
func frontendTLS() (config.RootTLS, error) {
	var root config.RootTLS
	cert, key := os.Getenv("TEMPORAL_TLS_FRONTEND_CERT"), os.Getenv("TEMPORAL_TLS_FRONTEND_KEY")
	if cert == "" && key == "" {
		return root, nil
	}
	if cert == "" || key == "" {
		return root, fmt.Errorf("TEMPORAL_TLS_FRONTEND_CERT and TEMPORAL_TLS_FRONTEND_KEY must be set together")
	}
	requireClient, err := strconv.ParseBool(env("TEMPORAL_TLS_REQUIRE_CLIENT_AUTH", "false"))
	if err != nil {
		return root, fmt.Errorf("TEMPORAL_TLS_REQUIRE_CLIENT_AUTH %q: want true or false", os.Getenv("TEMPORAL_TLS_REQUIRE_CLIENT_AUTH"))
	}
	clientCA := os.Getenv("TEMPORAL_TLS_CLIENT1_CA_CERT")
	if requireClient && clientCA == "" {
		return root, fmt.Errorf("TEMPORAL_TLS_REQUIRE_CLIENT_AUTH needs TEMPORAL_TLS_CLIENT1_CA_CERT")
	}
	serverCA := os.Getenv("TEMPORAL_TLS_SERVER_CA_CERT")
	if serverCA == "" {
		return root, fmt.Errorf("frontend TLS needs TEMPORAL_TLS_SERVER_CA_CERT, the CA the system workers verify the frontend with")
	}
	root.Frontend.Server = config.ServerTLS{CertFile: cert, KeyFile: key, RequireClientAuth: requireClient}
	if clientCA != "" {
		root.Frontend.Server.ClientCAFiles = []string{clientCA}
	}
	client := config.ClientTLS{ServerName: os.Getenv("TEMPORAL_TLS_FRONTEND_SERVER_NAME"), RootCAFiles: []string{serverCA}}
	root.SystemWorker = config.WorkerTLS{CertFile: cert, KeyFile: key, Client: client}
	return root, nil
}

// apiKeyInterceptor stands for an API-key gateway in front of the frontend,
// for the TLS tests of make test-topology (TEMPORALSERVER_API_KEY; not a
// variable of the image): a call whose authorization header is not
// "Bearer <key>" is refused as Unauthenticated, and the first call of each
// method that carries the key is reported on stderr as
//
//	temporalserver: API key accepted: <full method>
//
// so a test can see that a client sent it. Calls without the header pass:
// the server's own system workers send none.
func apiKeyInterceptor(key string) grpc.UnaryServerInterceptor {
	var seen sync.Map
	want := "Bearer " + key
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		got := md.Get("authorization")
		if len(got) == 0 {
			return handler(ctx, req)
		}
		if len(got) != 1 || got[0] != want {
			return nil, status.Error(codes.Unauthenticated, "API key not accepted")
		}
		if _, dup := seen.LoadOrStore(info.FullMethod, true); !dup {
			fmt.Fprintf(os.Stderr, "temporalserver: API key accepted: %s\n", info.FullMethod)
		}
		return handler(ctx, req)
	}
}

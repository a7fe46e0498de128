package devserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// webUI is the Temporal Web UI served in this process.
type webUI struct {
	srv  *uiserver.Server
	base string // "http://host:port"
	done chan struct{}
}

// startUI serves the Web UI and returns once it answers its health check.
func startUI(ctx context.Context, o Options) (*webUI, error) {
	host := o.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // the UI joins host and port without brackets
	}
	srv := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                host,
		Port:                o.UIPort,
		TemporalGRPCAddress: net.JoinHostPort(o.Host, strconv.Itoa(o.GRPCPort)),
		EnableUI:            true,
		DefaultNamespace:    o.Namespace,
		// Plain HTTP on localhost: a Secure cookie would never be sent back.
		CORS:     uiconfig.CORS{CookieInsecure: true},
		HideLogs: true,
		// Fetching news needs the internet, which a dev box may not have.
		DisableNewsFetch: true,
	}))
	ui := &webUI{
		srv:  srv,
		base: "http://" + net.JoinHostPort(o.Host, strconv.Itoa(o.UIPort)),
		done: make(chan struct{}),
	}
	// Start blocks until Stop. On a failed bind it does not return but exits
	// the process (log.Fatal), which is why Start checks the port first.
	go func() {
		defer close(ui.done)
		_ = srv.Start()
	}()
	if err := ui.waitHealthy(ctx); err != nil {
		ui.stop()
		return nil, err
	}
	return ui, nil
}

func (ui *webUI) waitHealthy(ctx context.Context) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ui.base+"/healthz", nil)
		if err != nil {
			return fmt.Errorf("web UI health request: %w", err)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("web UI at %s did not become healthy: %w", ui.base, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// namespaceURL opens the workflow list of namespace.
func (ui *webUI) namespaceURL(namespace string) string {
	return ui.base + "/namespaces/" + url.PathEscape(namespace) + "/workflows"
}

// stop closes the listener and waits for the serving goroutine to end.
func (ui *webUI) stop() {
	ui.srv.Stop()
	<-ui.done
}

// Command forgedev runs a Gitea for trying azolla's Gitea forge by hand
// (make forge-dev): on the local PostgreSQL, in a fresh database, with a
// repository azolla/demo, until Ctrl-C; it prints the URL, the logins and
// their tokens. With -build it only builds Gitea into the cache the tests
// use (make gitea) and prints the binary's path. See docs/forge-gitea.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/azolla/azolla/internal/forge/giteatest"
)

func main() {
	buildOnly := flag.Bool("build", false, "only build Gitea "+giteatest.Version+" (cached) and print its path")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *buildOnly); err != nil {
		fmt.Fprintln(os.Stderr, "forgedev:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, buildOnly bool) error {
	if buildOnly {
		begin := time.Now()
		inst, err := giteatest.Build(ctx, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Printf("%s (%s)\n", inst.Binary, time.Since(begin).Round(time.Second))
		return nil
	}
	logFile, err := os.CreateTemp("", "azolla-forgedev-*.log")
	if err != nil {
		return err
	}
	defer logFile.Close()
	fmt.Fprintf(os.Stderr, "starting Gitea %s (the first run builds it: minutes); its log: %s\n", giteatest.Version,
		logFile.Name())
	s, err := giteatest.Start(ctx, giteatest.Options{Log: logFile})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.API(ctx, s.Admin.Token, http.MethodPost, "/user/repos", map[string]any{
		"name": "demo", "auto_init": true, "readme": "Default", "default_branch": "main",
	}, nil); err != nil {
		return fmt.Errorf("create azolla/demo: %w", err)
	}
	for _, c := range []struct {
		user giteatest.User
		perm string
	}{{s.Reviewer, "write"}, {s.Reader, "read"}} {
		if err := s.API(ctx, s.Admin.Token, http.MethodPut, "/repos/"+s.Admin.Name+"/demo/collaborators/"+c.user.Name,
			map[string]string{"permission": c.perm}, nil); err != nil {
			return fmt.Errorf("make %s a collaborator: %w", c.user.Name, err)
		}
	}
	fmt.Printf(`Gitea %s is serving at %s
  repository  %s/%s/demo (public)
  admin       %s / %s   token %s   (azolla's account: owns the repository)
  reviewer    %s / %s   token %s   (may write: trusted)
  reader      %s / %s   token %s   (may only read: not trusted)
  stranger    %s / %s   token %s   (no role in it: not trusted)
Ctrl-C stops it and drops its database.
`, giteatest.Version, s.URL, s.URL, s.Admin.Name, s.Admin.Name, s.Admin.Password, s.Admin.Token,
		s.Reviewer.Name, s.Reviewer.Password, s.Reviewer.Token, s.Reader.Name, s.Reader.Password, s.Reader.Token,
		s.Stranger.Name, s.Stranger.Password, s.Stranger.Token)
	<-ctx.Done()
	return nil
}

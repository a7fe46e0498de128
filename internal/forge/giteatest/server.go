package giteatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// User is a Gitea account with an API token.
type User struct {
	Name     string
	Password string
	Email    string
	// Token may write repositories, issues and the user's own settings.
	Token string
}

// tokenPattern is what Gitea's access tokens look like.
var tokenPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// tokenScopes are what azolla's calls and the test side's need: the
// organisation's to read (azolla) and to set up (the test) a team.
const tokenScopes = "write:repository,write:issue,write:user,write:organization"

// Options configure Start.
type Options struct {
	// PostgresDSN names the server the database is created on; empty:
	// PostgresDSN().
	PostgresDSN string
	// Log receives the build's and Gitea's output; nil discards it.
	Log io.Writer
	// StartTimeout bounds the wait for the API to answer; zero: a minute.
	StartTimeout time.Duration
}

// Server is a running Gitea with four users: Admin (a site administrator,
// azolla's side), Reviewer (a second person, since a forge refuses a
// review of one's own pull request, who may write to every repository
// NewRepo makes), Reader (who may only read them) and Stranger (who has no
// role in them, yet may review them: they are public). Reader is the one
// member of Team.
type Server struct {
	// URL is the root of the web UI and API, without a trailing slash.
	URL      string
	Admin    User
	Reviewer User
	Reader   User
	Stranger User
	// Team is "org/team": an organisation of Admin's whose team holds
	// Reader.
	Team string

	install Install
	workDir string
	config  string
	ini     iniConfig
	env     []string
	pg      *postgres
	log     io.Writer
	cmd     *exec.Cmd
	done    chan struct{}
}

// Start builds Gitea if needed, and starts one on a fresh database.
func Start(ctx context.Context, opts Options) (_ *Server, err error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.PostgresDSN == "" {
		opts.PostgresDSN = PostgresDSN()
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = time.Minute
	}
	install, err := Build(ctx, opts.Log)
	if err != nil {
		return nil, err
	}
	s := &Server{install: install, log: opts.Log}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	if s.workDir, err = os.MkdirTemp("", "azolla-gitea-"); err != nil {
		return nil, err
	}
	if s.pg, err = createDatabase(ctx, opts.PostgresDSN); err != nil {
		return nil, err
	}
	s.config = filepath.Join(s.workDir, "app.ini")
	s.ini = newINIConfig(s.workDir, install.StaticRoot, s.pg)
	if err := s.choosePort(); err != nil {
		return nil, err
	}
	// Gitea and the git it runs see this environment only: no git
	// configuration of the caller's leaks into its repositories.
	home := filepath.Join(s.workDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	s.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GITEA_WORK_DIR=" + s.workDir}

	begin := time.Now()
	if _, err := s.cli(ctx, "migrate"); err != nil {
		return nil, err
	}
	migrated := time.Now()
	s.Admin = User{Name: "azolla", Password: "azolla-" + randomHex(8), Email: "azolla@example.com"}
	s.Reviewer = User{Name: "reviewer", Password: "reviewer-" + randomHex(8), Email: "reviewer@example.com"}
	s.Reader = User{Name: "reader", Password: "reader-" + randomHex(8), Email: "reader@example.com"}
	s.Stranger = User{Name: "stranger", Password: "stranger-" + randomHex(8), Email: "stranger@example.com"}
	if err := s.createUser(ctx, &s.Admin, true); err != nil {
		return nil, err
	}
	for _, u := range []*User{&s.Reviewer, &s.Reader, &s.Stranger} {
		if err := s.createUser(ctx, u, false); err != nil {
			return nil, err
		}
	}
	users := time.Now()
	// The port was free when chosen, but another process may bind it
	// before Gitea does: a Gitea that exits at start gets another.
	for attempt := 1; ; attempt++ {
		err := s.serve(ctx, opts.StartTimeout)
		if err == nil {
			break
		}
		if !errors.Is(err, errExited) || attempt == 3 {
			return nil, err
		}
		if err := s.choosePort(); err != nil {
			return nil, err
		}
	}
	if err := s.createTeam(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(s.log, "giteatest: migrate %s, users %s, web ready %s\n", migrated.Sub(begin).Round(time.Millisecond),
		users.Sub(migrated).Round(time.Millisecond), time.Since(users).Round(time.Millisecond))
	return s, nil
}

// createTeam makes Team: an organisation owned by Admin with a team whose
// one member is Reader.
func (s *Server) createTeam(ctx context.Context) error {
	const org, team = "people", "readers"
	if err := s.API(ctx, s.Admin.Token, http.MethodPost, "/orgs", map[string]any{"username": org}, nil); err != nil {
		return fmt.Errorf("create organisation %s: %w", org, err)
	}
	var t struct {
		ID int64 `json:"id"`
	}
	if err := s.API(ctx, s.Admin.Token, http.MethodPost, "/orgs/"+org+"/teams", map[string]any{
		"name": team, "permission": "read", "units": []string{"repo.code"},
	}, &t); err != nil {
		return fmt.Errorf("create team %s/%s: %w", org, team, err)
	}
	if err := s.API(ctx, s.Admin.Token, http.MethodPut,
		fmt.Sprintf("/teams/%d/members/%s", t.ID, s.Reader.Name), nil, nil); err != nil {
		return fmt.Errorf("add %s to team %s/%s: %w", s.Reader.Name, org, team, err)
	}
	s.Team = org + "/" + team
	return nil
}

// choosePort picks a free port for the server and writes its app.ini.
func (s *Server) choosePort() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.ini.Port = port
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	if err := writeAppINI(s.config, s.ini); err != nil {
		return fmt.Errorf("write app.ini: %w", err)
	}
	return nil
}

// createUser creates u and an API token for it with Gitea's CLI.
func (s *Server) createUser(ctx context.Context, u *User, admin bool) error {
	args := []string{"admin", "user", "create", "--username", u.Name, "--password", u.Password,
		"--email", u.Email, "--must-change-password=false"}
	if admin {
		args = append(args, "--admin")
	}
	if _, err := s.cli(ctx, args...); err != nil {
		return err
	}
	out, err := s.cli(ctx, "admin", "user", "generate-access-token", "--username", u.Name,
		"--token-name", "azolla-test", "--scopes", tokenScopes, "--raw")
	if err != nil {
		return err
	}
	// Gitea's CLI logs to standard output too; the token is the last line.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	u.Token = strings.TrimSpace(lines[len(lines)-1])
	if !tokenPattern.MatchString(u.Token) {
		return fmt.Errorf("gitea generate-access-token for %s printed no token", u.Name)
	}
	return nil
}

// cli runs a gitea command against this server's configuration and
// returns its standard output.
func (s *Server) cli(ctx context.Context, args ...string) (string, error) {
	name := commandName(args)
	args = append([]string{"--config", s.config, "--work-path", s.workDir}, args...)
	cmd := exec.CommandContext(ctx, s.install.Binary, args...)
	cmd.Env = s.env
	cmd.Dir = s.workDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("gitea %s: %w: %s", name, err, lastLines(stderr.String()+stdout.String(), 20))
	}
	return stdout.String(), nil
}

var errExited = errors.New("gitea web exited before answering")

// serve starts `gitea web` and waits until its API answers, the process
// ends, or timeout has passed.
func (s *Server) serve(ctx context.Context, timeout time.Duration) error {
	s.cmd = exec.Command(s.install.Binary, "--config", s.config, "--work-path", s.workDir, "web")
	s.cmd.Env = s.env
	s.cmd.Dir = s.workDir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// Gitea dies with the process that started it, even when that one is
	// killed (a test binary at its timeout).
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start gitea web: %w", err)
	}
	s.done = make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if ready(ctx, client, s.URL+"/api/v1/version") {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("%w: %v", errExited, s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("gitea web did not answer on %s: %w", s.URL, ctx.Err())
		case <-tick.C:
		}
	}
}

func ready(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop ends the Gitea process (SIGTERM, then SIGKILL after ten seconds)
// and keeps its database and files, so that Restart can bring it back:
// how tests see a forge that is down.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Restart starts a stopped server again on the same port and data.
func (s *Server) Restart(ctx context.Context) error {
	s.Stop()
	return s.serve(ctx, time.Minute)
}

// Close stops the server and removes its database and files.
func (s *Server) Close() error {
	s.Stop()
	var errs []error
	if s.pg != nil {
		errs = append(errs, s.pg.drop())
	}
	if s.workDir != "" {
		errs = append(errs, os.RemoveAll(s.workDir))
	}
	return errors.Join(errs...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// commandName is the words of a gitea command line before its flags,
// which may hold a password.
func commandName(args []string) string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

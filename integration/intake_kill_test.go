package integration

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/internal/store"
)

// killAfterIssues is a proxy in front of Gitea that, the first time it
// answers a list of issues holding one, first takes the store's write
// lock (so the reader cannot have written anything of it) and, once the
// answer is sent, SIGKILLs the process set in victim.
type killAfterIssues struct {
	upstream http.Handler
	lock     func() error
	lockErr  error
	mu       sync.Mutex
	victim   *exec.Cmd
	killed   chan struct{}
	once     sync.Once
}

func (k *killAfterIssues) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/issues") {
		k.upstream.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	k.upstream.ServeHTTP(rec, r)
	hit := false
	k.mu.Lock()
	victim := k.victim
	k.mu.Unlock()
	if victim != nil && rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), `"number"`) {
		k.once.Do(func() { hit = true })
	}
	if hit {
		k.lockErr = k.lock()
	}
	for key, v := range rec.Header() {
		w.Header()[key] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if hit {
		_ = victim.Process.Signal(syscall.SIGKILL)
		close(k.killed)
	}
}

// A worker process SIGKILLed after the forge answered its read of the
// issues and before it could write what it read: two workers started
// after it race to take the issue, and the issue is still one objective,
// with one status comment, and one answer to a command comment.
func TestForge_IntakeWorkerKilledBetweenTheForgeReadAndTheStoreWrite(t *testing.T) {
	t.Parallel()
	s := giteatest.Shared(t)
	target, err := url.Parse(s.URL)
	require.NoError(t, err)
	k := &killAfterIssues{upstream: httputil.NewSingleHostReverseProxy(target), killed: make(chan struct{})}
	// Every worker reads the forge through the proxy: one forge address,
	// so one source for the issue whichever worker takes it.
	proxy := httptest.NewServer(k)
	t.Cleanup(proxy.Close)
	w := setupForgeWith(t, s, func(fc *config.ForgeConfig) {
		fc.URL = proxy.URL
		fc.PollInterval = config.MinForgePollInterval
		fc.Intake = config.IntakeConfig{Label: "azolla"}
	}, nil, func(o *setupOptions) { o.noWorker, o.leaseTTL = true, 3*time.Second })
	ctx := context.Background()

	// The test's own connection to the store holds its write lock from the
	// moment the issues are answered until the process is dead.
	db, err := sql.Open("sqlite", "file:"+w.cfg.SQLitePath()+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	k.lock = func() error {
		_, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		return err
	}

	cfgFile := writeConfig(t, w.bundle)
	worker := func(name string) *exec.Cmd { return w.workerProcess(t, name, "--config", cfgFile) }

	number := w.repo.OpenIssue(t, s.Stranger, "Count me once", "- [ ] once", []string{"azolla"}, nil)
	first := worker("first")
	k.mu.Lock()
	k.victim = first
	k.mu.Unlock()
	select {
	case <-k.killed:
	case <-time.After(2 * time.Minute):
		t.Fatal("the first worker never read the issue")
	}
	_ = first.Wait()
	require.NoError(t, k.lockErr, "the store's write lock was taken before the answer")
	items, err := w.store.ListIntakeItems(ctx, store.ListIntakeItemsParams{})
	require.NoError(t, err)
	require.Empty(t, items, "killed between the read and the write: nothing of the issue was written")
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)

	// Two workers race for the leadership and the issue.
	worker("second")
	worker("third")
	source := domain.ForgeSource(forge.KindGitea, proxy.URL, w.repo.Owner+"/"+w.repo.Name)
	var it *domain.IntakeItem
	require.Eventually(t, func() bool {
		it, err = w.store.GetIntakeItem(ctx, source, strconv.Itoa(number))
		return err == nil
	}, 2*time.Minute, 200*time.Millisecond, "the issue is taken")
	statuses := func() []forge.Comment {
		var out []forge.Comment
		for _, c := range w.issueComments(t, number) {
			if strings.Contains(c.Body, "<!-- azolla:status ") {
				out = append(out, c)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(statuses()) == 1 }, 2*time.Minute, 200*time.Millisecond,
		"the status comment is posted")
	// A command read by a later pass: the objective is not taken again.
	w.repo.CommentAs(t, s.Reviewer, forge.Thread{Number: number}, "/azolla status")
	require.Eventually(t, func() bool {
		cmds, err := w.store.ListForgeCommands(ctx, it.ObjectiveID)
		return err == nil && len(cmds) == 1
	}, 2*time.Minute, 200*time.Millisecond, "the command is acted on")

	items, err = w.store.ListIntakeItems(ctx, store.ListIntakeItemsParams{})
	require.NoError(t, err)
	require.Len(t, items, 1, "one intake item")
	objs, err := w.store.ListObjectives(ctx, store.ListObjectivesParams{})
	require.NoError(t, err)
	require.Len(t, objs, 1, "one objective for the issue")
	require.Len(t, statuses(), 1, "one status comment")
	replies := 0
	for _, c := range by(w.issueComments(t, number), s.Admin.Name) {
		if strings.Contains(c.Body, "<!-- azolla:reply ") {
			replies++
		}
	}
	require.Equal(t, 1, replies, "one answer to the command")
	requireVerifyClean(t, w.workerEnv())
}

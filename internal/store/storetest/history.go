package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// ClaimStore is what History records: the claims and the transactions
// the fenced writes run in (claim.Store's roles).
type ClaimStore interface {
	store.ClaimQuerier
	store.Transactor
}

// Op kinds of a claim history.
const (
	OpAcquire = "acquire"
	OpRenew   = "renew"
	OpRelease = "release"
	// OpFenced is a fenced write: a transaction that checks the fence, then
	// writes the resource's protected value (Written).
	OpFenced = "fenced"
	// OpRead reads the protected value.
	OpRead = "read"
)

// ClaimInput is what an operation of the history asked.
type ClaimInput struct {
	Kind     string
	Resource string // resource type and id
	Owner    string
	// Version is the hold a renewal, release or fenced write names.
	Version int64
	// At is the caller's clock as the operation gave it to the store, and
	// TTL the lease asked for: the store judges expiry by them.
	At  time.Time
	TTL time.Duration
	// Written is what a fenced write writes.
	Written string
}

// ClaimOutput is what became of it. Unknown: the call failed in a way
// that does not say whether the store applied it (a connection lost, a
// deadline), so the checker takes either.
type ClaimOutput struct {
	Unknown bool
	OK      bool
	// Version is the claim version an acquisition, renewal or release
	// produced.
	Version int64
	// Read is what a read found ("" for nothing written yet).
	Read string
}

// OutcomeInput is a delivery: the bundle a caller wrote for a workorder,
// named by its title and runner status.
type OutcomeInput struct {
	WorkOrder string
	Bundle    string
}

// OutcomeOutput is what the store kept: whether this call created the
// bundle, and the bundle the workorder has. Unknown as ClaimOutput's.
type OutcomeOutput struct {
	Unknown bool
	Created bool
	Stored  string
}

// History records operations on claims, with their invocation and
// response times, as a linearizability checker reads them. Deliveries of
// output bundles go to a history of their own (Outcomes). Wrap the store
// the claim bridge runs on with Store; record reads with Read.
type History struct {
	start    time.Time
	mu       sync.Mutex
	ops      []porcupine.Operation
	outcomes []porcupine.Operation
	// clients numbers the owners, for the visualization.
	clients map[string]int
	// answered counts the operations whose outcome is known.
	answered int
}

// NewHistory starts an empty history.
func NewHistory() *History { return &History{start: time.Now(), clients: map[string]int{}} }

func (h *History) now() int64 { return int64(time.Since(h.start)) }

// record adds one operation; an unknown outcome has no response time (it
// may take effect any time after its call).
func (h *History) record(client string, in ClaimInput, call int64, out ClaimOutput) {
	ret := h.now()
	if out.Unknown {
		ret = math.MaxInt64
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	id, ok := h.clients[client]
	if !ok {
		id = len(h.clients)
		h.clients[client] = id
	}
	h.ops = append(h.ops, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
	if !out.Unknown {
		h.answered++
	}
}

// Answered is how many recorded operations have a known outcome: the
// work a faulty run got done so far.
func (h *History) Answered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answered
}

// Outcomes returns the recorded deliveries.
func (h *History) Outcomes() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]porcupine.Operation(nil), h.outcomes...)
}

// deliver records a delivery made in a transaction that committed (ok) or
// whose fate is unknown.
func (h *History) deliver(in OutcomeInput, call int64, out OutcomeOutput) {
	ret := h.now()
	if out.Unknown {
		ret = math.MaxInt64
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outcomes = append(h.outcomes, porcupine.Operation{Input: in, Call: call, Output: out, Return: ret})
}

// Len is how many operations were recorded.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops)
}

// Operations returns the recorded operations.
func (h *History) Operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]porcupine.Operation(nil), h.ops...)
}

// Read records a read of resource's protected value by client: read
// returns it, "" when nothing was written.
func (h *History) Read(client, resource string, read func() (string, error)) (string, error) {
	call := h.now()
	v, err := read()
	if err != nil {
		// A read that failed tells nothing; it changed nothing either.
		return v, err
	}
	h.record(client, ClaimInput{Kind: OpRead, Resource: resource}, call, ClaimOutput{OK: true, Read: v})
	return v, nil
}

// Store wraps s so that every claim operation, and every transaction that
// checks a fence and then writes, is recorded. written names what a
// fenced transaction writes, as the caller set it up (see Fenced).
func (h *History) Store(s ClaimStore) *RecordingStore { return &RecordingStore{ClaimStore: s, h: h} }

// RecordingStore is a ClaimStore that records into its History.
type RecordingStore struct {
	ClaimStore
	h *History
}

func resourceOf(resourceType, resourceID string) string { return resourceType + "/" + resourceID }

// protocolErr says whether err is the store's answer (the operation was
// judged and refused), as opposed to a failure that leaves its outcome
// unknown.
func protocolErr(err error) bool {
	return errors.Is(err, domain.ErrLeaseLost) || errors.Is(err, domain.ErrNotHolder)
}

// AcquireClaim records an acquisition.
func (r *RecordingStore) AcquireClaim(ctx context.Context, p store.AcquireClaimParams) (*domain.ClaimRecord, bool, error) {
	call := r.h.now()
	c, ok, err := r.ClaimStore.AcquireClaim(ctx, p)
	r.h.record(p.OwnerID, acquireInput(p), call, acquireOutput(c, ok, err))
	return c, ok, err
}

// RenewClaim records a renewal.
func (r *RecordingStore) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	call := r.h.now()
	c, err := r.ClaimStore.RenewClaim(ctx, p)
	r.h.record(p.OwnerID, renewInput(p), call, swapOutput(c, err))
	return c, err
}

// ReleaseClaim records a release.
func (r *RecordingStore) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*domain.ClaimRecord, error) {
	call := r.h.now()
	c, err := r.ClaimStore.ReleaseClaim(ctx, p)
	r.h.record(p.OwnerID, releaseInput(p), call, swapOutput(c, err))
	return c, err
}

func acquireInput(p store.AcquireClaimParams) ClaimInput {
	return ClaimInput{Kind: OpAcquire, Resource: resourceOf(p.ResourceType, p.ResourceID), Owner: p.OwnerID, At: p.Now, TTL: p.TTL}
}

func renewInput(p store.RenewClaimParams) ClaimInput {
	return ClaimInput{Kind: OpRenew, Resource: resourceOf(p.ResourceType, p.ResourceID), Owner: p.OwnerID,
		Version: p.ClaimVersion, At: p.Now, TTL: p.TTL}
}

func releaseInput(p store.ReleaseClaimParams) ClaimInput {
	return ClaimInput{Kind: OpRelease, Resource: resourceOf(p.ResourceType, p.ResourceID), Owner: p.OwnerID,
		Version: p.ClaimVersion, At: p.Now}
}

// acquireOutput is what an acquisition answered: the version it took, a
// refusal, or an outcome unknown.
func acquireOutput(c *domain.ClaimRecord, ok bool, err error) ClaimOutput {
	switch {
	case err != nil:
		return ClaimOutput{Unknown: true}
	case ok:
		return ClaimOutput{OK: true, Version: c.ClaimVersion}
	}
	return ClaimOutput{}
}

// swapOutput is what a compare-and-swap on a held version (a renewal, a
// release) answered: the version it made, a refusal the store answered,
// or an outcome unknown.
func swapOutput(c *domain.ClaimRecord, err error) ClaimOutput {
	switch {
	case err == nil:
		return ClaimOutput{OK: true, Version: c.ClaimVersion}
	case !protocolErr(err):
		return ClaimOutput{Unknown: true}
	}
	return ClaimOutput{}
}

// writtenKey carries, in a fenced transaction's context, what it writes.
type writtenKey struct{}

// Writing marks ctx as the context of a fenced transaction that writes
// value: the recorder names it in the history.
func Writing(ctx context.Context, value string) context.Context {
	return context.WithValue(ctx, writtenKey{}, value)
}

// InTx records a transaction that checks a fence (its first statement, as
// claim.Lease.Fenced runs it) as one fenced write, and the claim
// operations and bundle deliveries made in it, once its fate is known.
func (r *RecordingStore) InTx(ctx context.Context, fn func(q store.Querier) error) error {
	_, err := recordTx(r, ctx, func(wrap func(store.Querier) store.Querier) (struct{}, error) {
		return struct{}{}, r.ClaimStore.InTx(ctx, func(q store.Querier) error { return fn(wrap(q)) })
	})
	return err
}

// txSpy records what one transaction does: its claim operations, the fence
// it checks and the bundles it delivers. Each is recorded once the
// transaction's fate is known (settle): what it did counts only if it
// committed, and is unknown if the transaction failed after it.
type txSpy struct {
	r       *RecordingStore
	written string
	call    int64
	// One attempt's findings; a transaction tried again starts afresh.
	claims    []txClaim
	fence     *store.Fence
	fenceErr  error
	delivered []txDelivery
}

type txClaim struct {
	in   ClaimInput
	call int64
	out  ClaimOutput
}

type txDelivery struct {
	in  OutcomeInput
	out OutcomeOutput
}

func (r *RecordingStore) txSpy(ctx context.Context) *txSpy {
	written, _ := ctx.Value(writtenKey{}).(string)
	return &txSpy{r: r, written: written, call: r.h.now()}
}

// wrap starts an attempt of the transaction on q.
func (t *txSpy) wrap(q store.Querier) store.Querier {
	t.claims, t.fence, t.fenceErr, t.delivered = nil, nil, nil, nil
	return &fenceSpy{Querier: q, t: t}
}

// settle records the transaction's findings, err being its outcome.
func (t *txSpy) settle(err error) {
	h := t.r.h
	for _, c := range t.claims {
		if c.out.OK && err != nil {
			// Done, then the transaction failed: committed or not.
			c.out = ClaimOutput{Unknown: true}
		}
		h.record(c.in.Owner, c.in, c.call, c.out)
	}
	for _, d := range t.delivered {
		switch {
		case err == nil:
			h.deliver(d.in, t.call, d.out)
		case t.fenceErr == nil:
			h.deliver(d.in, t.call, OutcomeOutput{Unknown: true})
		}
	}
	if t.fence == nil {
		return
	}
	in := ClaimInput{Kind: OpFenced, Resource: resourceOf(t.fence.ResourceType, t.fence.ResourceID), Owner: t.fence.OwnerID,
		Version: t.fence.ClaimVersion, Written: t.written}
	out := ClaimOutput{OK: err == nil}
	switch {
	case err == nil:
	case t.fenceErr != nil && protocolErr(t.fenceErr) && errors.Is(err, t.fenceErr):
		// Refused by the fence: nothing was written.
	default:
		out = ClaimOutput{Unknown: true}
	}
	h.record(t.fence.OwnerID, in, t.call, out)
}

// fenceSpy is a transaction's querier that tells its txSpy what it does.
type fenceSpy struct {
	store.Querier
	t *txSpy
}

func bundleName(b *domain.OutputBundle) string { return b.RunnerStatus + " " + b.Title }

func (s *fenceSpy) CreateOutputBundle(ctx context.Context, b *domain.OutputBundle) (*domain.OutputBundle, bool, error) {
	stored, created, err := s.Querier.CreateOutputBundle(ctx, b)
	if err == nil {
		s.t.delivered = append(s.t.delivered, txDelivery{OutcomeInput{WorkOrder: b.WorkOrderID, Bundle: bundleName(b)},
			OutcomeOutput{Created: created, Stored: bundleName(stored)}})
	}
	return stored, created, err
}

func (s *fenceSpy) CheckFence(ctx context.Context, f store.Fence) error {
	err := s.Querier.CheckFence(ctx, f)
	s.t.fence, s.t.fenceErr = &f, err
	return err
}

func (s *fenceSpy) AcquireClaim(ctx context.Context, p store.AcquireClaimParams) (*domain.ClaimRecord, bool, error) {
	call := s.t.r.h.now()
	c, ok, err := s.Querier.AcquireClaim(ctx, p)
	s.t.claims = append(s.t.claims, txClaim{in: acquireInput(p), call: call, out: acquireOutput(c, ok, err)})
	return c, ok, err
}

func (s *fenceSpy) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	call := s.t.r.h.now()
	c, err := s.Querier.RenewClaim(ctx, p)
	s.t.claims = append(s.t.claims, txClaim{in: renewInput(p), call: call, out: swapOutput(c, err)})
	return c, err
}

func (s *fenceSpy) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*domain.ClaimRecord, error) {
	call := s.t.r.h.now()
	c, err := s.Querier.ReleaseClaim(ctx, p)
	s.t.claims = append(s.t.claims, txClaim{in: releaseInput(p), call: call, out: swapOutput(c, err)})
	return c, err
}

// claimState is the model's view of one resource: its claim row and the
// value its fenced writes protect.
type claimState struct {
	Exists   bool
	Owner    string
	Version  int64
	Expires  time.Time
	Released bool
	Value    string
}

// holds says whether owner at version holds the claim as the store judges
// a renewal, release or fence: the same owner and version, not released
// (expiry is the acquirer's to judge, by its own clock).
func (s claimState) holds(owner string, version int64) bool {
	return s.Exists && !s.Released && s.Owner == owner && s.Version == version
}

// applied is what the operation does to s when the store takes it, with
// the output it answers; ok is false when the store refuses it (and s
// stays).
func applied(s claimState, in ClaimInput) (next claimState, out ClaimOutput, ok bool) {
	switch in.Kind {
	case OpAcquire:
		// Only the expiry counts, by the acquirer's clock: a release sets
		// it to the releaser's.
		if s.Exists && s.Expires.After(in.At) {
			return s, ClaimOutput{}, false
		}
		next = s
		next.Exists, next.Owner, next.Version, next.Expires, next.Released = true, in.Owner, s.Version+1, in.At.Add(in.TTL), false
		return next, ClaimOutput{OK: true, Version: next.Version}, true
	case OpRenew:
		if !s.holds(in.Owner, in.Version) {
			return s, ClaimOutput{}, false
		}
		next = s
		next.Version, next.Expires = s.Version+1, in.At.Add(in.TTL)
		return next, ClaimOutput{OK: true, Version: next.Version}, true
	case OpRelease:
		if !s.holds(in.Owner, in.Version) {
			return s, ClaimOutput{}, false
		}
		next = s
		next.Version, next.Expires, next.Released = s.Version+1, in.At, true
		return next, ClaimOutput{OK: true, Version: next.Version}, true
	case OpFenced:
		if !s.holds(in.Owner, in.Version) {
			return s, ClaimOutput{}, false
		}
		next = s
		next.Value = in.Written
		return next, ClaimOutput{OK: true}, true
	}
	return s, ClaimOutput{}, false
}

// partitionBy splits a history by the key of each operation's input (a
// resource, a workorder), whose histories are checked apart.
func partitionBy(key func(input any) string) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := key(op.Input)
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	}
}

// ClaimModel is the claim protocol as a sequential specification, one
// register per resource fenced by its claim's version: an acquisition
// takes a claim that is missing or expired by the acquirer's clock (a
// release expires it), and bumps the version; a renewal, release or fenced write
// succeeds only for the owner at the current version of an unreleased
// claim; a read sees the last fenced write. An operation whose outcome is
// unknown may have been applied or not.
func ClaimModel() porcupine.Model {
	m := porcupine.NondeterministicModel{
		Partition: partitionBy(func(in any) string { return in.(ClaimInput).Resource }),
		Init:      func() []any { return []any{claimState{}} },
		Step: func(state, input, output any) []any {
			s, in, out := state.(claimState), input.(ClaimInput), output.(ClaimOutput)
			if in.Kind == OpRead {
				if out.Read == s.Value {
					return []any{s}
				}
				return nil
			}
			next, answer, ok := applied(s, in)
			switch {
			case out.Unknown && ok:
				return []any{s, next}
			case out.Unknown:
				return []any{s}
			case ok && out.OK && (in.Kind == OpFenced || answer.Version == out.Version):
				return []any{next}
			case !ok && !out.OK:
				return []any{s}
			}
			return nil
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(ClaimInput), output.(ClaimOutput)
			var res string
			switch {
			case out.Unknown:
				res = "?"
			case in.Kind == OpRead:
				res = fmt.Sprintf("%q", out.Read)
			case out.OK && in.Kind != OpFenced:
				res = fmt.Sprintf("ok v%d", out.Version)
			case out.OK:
				res = "ok"
			default:
				res = "refused"
			}
			switch in.Kind {
			case OpAcquire:
				return fmt.Sprintf("%s acquire ttl %s -> %s", in.Owner, in.TTL, res)
			case OpRead:
				return "read -> " + res
			case OpFenced:
				return fmt.Sprintf("%s v%d write %q -> %s", in.Owner, in.Version, in.Written, res)
			}
			return fmt.Sprintf("%s v%d %s -> %s", in.Owner, in.Version, in.Kind, res)
		},
		DescribeState: func(state any) string {
			s := state.(claimState)
			if !s.Exists {
				return "no claim"
			}
			held := "held by " + s.Owner
			if s.Released {
				held = "released"
			}
			return fmt.Sprintf("v%d %s, value %q", s.Version, held, s.Value)
		},
	}
	return m.ToModel()
}

// FullStore wraps a whole store (a worker's), recording its claim
// operations and fenced transactions as Store does.
func (h *History) FullStore(s store.Store) store.Store {
	return &recordingFull{Store: s, rec: h.Store(s)}
}

type recordingFull struct {
	store.Store
	rec *RecordingStore
}

func (r *recordingFull) AcquireClaim(ctx context.Context, p store.AcquireClaimParams) (*domain.ClaimRecord, bool, error) {
	return r.rec.AcquireClaim(ctx, p)
}

func (r *recordingFull) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	return r.rec.RenewClaim(ctx, p)
}

func (r *recordingFull) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*domain.ClaimRecord, error) {
	return r.rec.ReleaseClaim(ctx, p)
}

func (r *recordingFull) InTx(ctx context.Context, fn func(q store.Querier) error) error {
	return r.rec.InTx(ctx, fn)
}

// The job transactions run the control plane's hooks (a remote run's
// WORKORDER claim and run slots, its output bundle): what those do in
// them is recorded as in InTx.

func (r *recordingFull) StartJobAttempt(ctx context.Context, p store.StartJobAttemptParams) (*store.StartedJobAttempt, error) {
	return recordTx(r.rec, ctx, func(wrap func(store.Querier) store.Querier) (*store.StartedJobAttempt, error) {
		if on := p.OnStart; on != nil {
			p.OnStart = func(q store.Querier, s *store.StartedJobAttempt) error { return on(wrap(q), s) }
		}
		return r.Store.StartJobAttempt(ctx, p)
	})
}

func (r *recordingFull) RenewJobLease(ctx context.Context, p store.RenewJobLeaseParams) (*domain.JobLease, error) {
	return recordTx(r.rec, ctx, func(wrap func(store.Querier) store.Querier) (*domain.JobLease, error) {
		if on := p.OnRenew; on != nil {
			p.OnRenew = func(q store.Querier, j *domain.Job, l *domain.JobLease) error { return on(wrap(q), j, l) }
		}
		return r.Store.RenewJobLease(ctx, p)
	})
}

func (r *recordingFull) SettleJobAttempt(ctx context.Context, p store.SettleJobAttemptParams) (*store.SettledJobAttempt, error) {
	return recordTx(r.rec, Writing(ctx, "settle "+p.JobID), func(wrap func(store.Querier) store.Querier) (*store.SettledJobAttempt, error) {
		if on := p.OnSettle; on != nil {
			p.OnSettle = func(q store.Querier, j *domain.Job) error { return on(wrap(q), j) }
		}
		return r.Store.SettleJobAttempt(ctx, p)
	})
}

func (r *recordingFull) ExpireJobAttempt(ctx context.Context, p store.ExpireJobAttemptParams) (*domain.Job, error) {
	return recordTx(r.rec, ctx, func(wrap func(store.Querier) store.Querier) (*domain.Job, error) {
		if on := p.OnExpire; on != nil {
			p.OnExpire = func(q store.Querier, j *domain.Job) error { return on(wrap(q), j) }
		}
		return r.Store.ExpireJobAttempt(ctx, p)
	})
}

// recordTx runs a transaction whose querier run hands its callback
// through wrap, and records what the callback did once the transaction's
// fate is known (txSpy).
func recordTx[T any](r *RecordingStore, ctx context.Context, run func(wrap func(store.Querier) store.Querier) (T, error)) (T, error) {
	spy := r.txSpy(ctx)
	res, err := run(spy.wrap)
	spy.settle(err)
	return res, err
}

// OutcomeModel is the outcome rule as a sequential specification: a
// workorder has exactly one output bundle, the first delivered; a later
// delivery creates nothing and is answered with the first.
func OutcomeModel() porcupine.Model {
	m := porcupine.NondeterministicModel{
		Partition: partitionBy(func(in any) string { return in.(OutcomeInput).WorkOrder }),
		Init:      func() []any { return []any{""} },
		Step: func(state, input, output any) []any {
			stored, in, out := state.(string), input.(OutcomeInput), output.(OutcomeOutput)
			next := stored
			if stored == "" {
				next = in.Bundle
			}
			switch {
			case out.Unknown:
				return []any{stored, next}
			case stored == "" && out.Created && out.Stored == in.Bundle:
				return []any{next}
			case stored != "" && !out.Created && out.Stored == stored:
				return []any{stored}
			}
			return nil
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(OutcomeInput), output.(OutcomeOutput)
			if out.Unknown {
				return fmt.Sprintf("deliver %q -> ?", in.Bundle)
			}
			return fmt.Sprintf("deliver %q -> created %t, stored %q", in.Bundle, out.Created, out.Stored)
		},
		DescribeState: func(state any) string { return fmt.Sprintf("bundle %q", state) },
	}
	return m.ToModel()
}

// CheckOutcomeHistory checks h's deliveries against OutcomeModel, as
// CheckClaimHistory checks its claims, and returns how many it checked.
func CheckOutcomeHistory(t testing.TB, h *History, name string) int {
	t.Helper()
	return mustLinearize(t, OutcomeModel(), h.Outcomes(), "outcomes-"+name)
}

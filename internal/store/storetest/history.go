package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
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

// Outcome rules: what a history of outcomes holds one of.
const (
	// RuleBundle: a workorder has one output bundle, the first delivered;
	// a later delivery creates nothing and is answered with the first.
	RuleBundle = "bundle"
	// RulePullRequest: an objective has one pull request; recording the
	// same one again creates nothing, and recording another is refused.
	RulePullRequest = "pull request"
	// RuleChosen: a workorder's best-of-N has one chosen candidate;
	// choosing it again changes nothing, and choosing another is refused.
	RuleChosen = "chosen"
)

// OutcomeInput is a write of an outcome under one of the rules: Value
// (a bundle named by its runner status and title, a pull request's
// number, a candidate's attempt) for Key (a workorder, an objective).
type OutcomeInput struct {
	Rule, Key, Value string
}

// OutcomeOutput is what the store answered: whether this call created
// the outcome (RuleChosen's store does not say, and it is not read), the
// outcome it keeps, or a refusal because it keeps another. Unknown as
// ClaimOutput's.
type OutcomeOutput struct {
	Unknown bool
	Created bool
	Refused bool
	Stored  string
}

// History records operations on claims, with their invocation and
// response times, as a linearizability checker reads them. Writes of
// outcomes (bundles, pull requests, chosen candidates) go to a history of
// their own (Outcomes). Wrap the store the claim bridge runs on with
// Store, a whole store with FullStore; record reads with Read.
//
// An operation is begun when it is called and ended when its outcome is
// known; one begun and never ended (its caller was killed, or is still
// waiting) counts as one whose outcome is unknown. Times are the wall
// clock's, so that the histories of several processes on one machine
// (Journal, Load) merge into one.
type History struct {
	mu       sync.Mutex
	ops      []porcupine.Operation
	outcomes []porcupine.Operation
	pending  map[int64]pendingOp
	next     int64
	// clients numbers the owners, for the visualization.
	clients map[string]int
	// answered counts the operations whose outcome is known.
	answered int
	// journal, when set, gets every begin, end and drop as a line.
	journal *os.File
}

// pendingOp is an operation begun and not yet ended: its input is a
// ClaimInput or an OutcomeInput.
type pendingOp struct {
	client string
	in     any
	call   int64
}

// NewHistory starts an empty history.
func NewHistory() *History {
	return &History{pending: map[int64]pendingOp{}, clients: map[string]int{}}
}

func (h *History) now() int64 { return time.Now().UnixNano() }

// begin starts an operation called at call by client, its input a
// ClaimInput or an OutcomeInput, and returns its ticket for end or drop.
func (h *History) begin(client string, in any, call int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.next
	h.next++
	h.pending[id] = pendingOp{client: client, in: in, call: call}
	h.write(journalLine{Op: "begin", ID: id, Client: client, Call: call}.with(in))
	return id
}

// end records the outcome of a begun operation, a ClaimOutput or an
// OutcomeOutput; an unknown outcome has no response time (it may take
// effect any time after its call).
func (h *History) end(id int64, out any) {
	ret := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.pending[id]
	if !ok {
		panic(fmt.Sprintf("storetest: operation %d ended twice, or never begun", id))
	}
	delete(h.pending, id)
	h.write(journalLine{Op: "end", ID: id, Ret: ret}.with(out))
	h.add(p, out, ret)
}

// add appends p, ended with out at ret, to its history. Called with h.mu
// held.
func (h *History) add(p pendingOp, out any, ret int64) {
	op := p.operation(h.clientID(p.client), out, ret)
	if _, claim := out.(ClaimOutput); claim {
		h.ops = append(h.ops, op)
		if !unknown(out) {
			h.answered++
		}
		return
	}
	h.outcomes = append(h.outcomes, op)
}

// drop forgets a begun operation that did nothing: a statement that
// failed in a transaction rolled back.
func (h *History) drop(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.pending, id)
	h.write(journalLine{Op: "drop", ID: id})
}

// record begins and ends an operation at once.
func (h *History) record(client string, in ClaimInput, call int64, out ClaimOutput) {
	h.end(h.begin(client, in, call), out)
}

// clientID numbers client for the visualization. Called with h.mu held.
func (h *History) clientID(client string) int {
	id, ok := h.clients[client]
	if !ok {
		id = len(h.clients)
		h.clients[client] = id
	}
	return id
}

// operation is p ended with out at ret: at no time if its outcome is
// unknown.
func (p pendingOp) operation(client int, out any, ret int64) porcupine.Operation {
	if unknown(out) {
		ret = math.MaxInt64
	}
	return porcupine.Operation{ClientId: client, Input: p.in, Call: p.call, Output: out, Return: ret}
}

// unknown says whether out, a ClaimOutput or an OutcomeOutput, is an
// outcome unknown.
func unknown(out any) bool {
	switch o := out.(type) {
	case ClaimOutput:
		return o.Unknown
	case OutcomeOutput:
		return o.Unknown
	}
	return false
}

// unknownOutput is the output of p's kind whose outcome is unknown.
func (p pendingOp) unknownOutput() any {
	if _, claim := p.in.(ClaimInput); claim {
		return ClaimOutput{Unknown: true}
	}
	return OutcomeOutput{Unknown: true}
}

// Pending is how many operations were begun and not ended: in flight, or
// left so by a process that was killed.
func (h *History) Pending() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.pending)
}

// Answered is how many recorded operations have a known outcome: the
// work a faulty run got done so far.
func (h *History) Answered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answered
}

// Outcomes returns the recorded writes of outcomes, those still pending
// as unknown.
func (h *History) Outcomes() []porcupine.Operation {
	return h.snapshot(false)
}

// Len is how many claim operations were recorded.
func (h *History) Len() int {
	return len(h.Operations())
}

// Operations returns the recorded claim operations, those still pending
// as unknown.
func (h *History) Operations() []porcupine.Operation {
	return h.snapshot(true)
}

func (h *History) snapshot(claims bool) []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	src := h.outcomes
	if claims {
		src = h.ops
	}
	out := append([]porcupine.Operation(nil), src...)
	for _, p := range h.pending {
		if _, claim := p.in.(ClaimInput); claim == claims {
			out = append(out, p.operation(h.clientID(p.client), p.unknownOutput(), math.MaxInt64))
		}
	}
	return out
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
	id := r.h.begin(p.OwnerID, acquireInput(p), r.h.now())
	c, ok, err := r.ClaimStore.AcquireClaim(ctx, p)
	r.h.end(id, acquireOutput(c, ok, err))
	return c, ok, err
}

// RenewClaim records a renewal.
func (r *RecordingStore) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	id := r.h.begin(p.OwnerID, renewInput(p), r.h.now())
	c, err := r.ClaimStore.RenewClaim(ctx, p)
	r.h.end(id, swapOutput(c, err))
	return c, err
}

// ReleaseClaim records a release.
func (r *RecordingStore) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*domain.ClaimRecord, error) {
	id := r.h.begin(p.OwnerID, releaseInput(p), r.h.now())
	c, err := r.ClaimStore.ReleaseClaim(ctx, p)
	r.h.end(id, swapOutput(c, err))
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
// it checks and the bundles it delivers. Each is begun as it is called and
// ended once the transaction's fate is known (settle): what it did counts
// only if it committed, and is unknown if the transaction failed after
// it.
type txSpy struct {
	r       *RecordingStore
	written string
	call    int64
	// One attempt's findings; a transaction tried again starts afresh.
	claims    []txOp[ClaimOutput]
	fence     *store.Fence
	fenceOp   int64
	fenceErr  error
	delivered []txOp[OutcomeOutput]
}

// txOp is an operation begun in a transaction, with what it answered.
type txOp[O any] struct {
	id  int64
	out O
}

func (r *RecordingStore) txSpy(ctx context.Context) *txSpy {
	written, _ := ctx.Value(writtenKey{}).(string)
	return &txSpy{r: r, written: written, call: r.h.now()}
}

// wrap starts an attempt of the transaction on q; what an attempt before
// it did was rolled back.
func (t *txSpy) wrap(q store.Querier) store.Querier {
	h := t.r.h
	for _, c := range t.claims {
		h.drop(c.id)
	}
	for _, d := range t.delivered {
		h.drop(d.id)
	}
	if t.fence != nil {
		h.drop(t.fenceOp)
	}
	t.claims, t.fence, t.fenceErr, t.delivered = nil, nil, nil, nil
	return &fenceSpy{Querier: q, t: t}
}

// settle ends the transaction's operations, err being its outcome.
func (t *txSpy) settle(err error) {
	h := t.r.h
	for _, c := range t.claims {
		if c.out.OK && err != nil {
			// Done, then the transaction failed: committed or not.
			c.out = ClaimOutput{Unknown: true}
		}
		h.end(c.id, c.out)
	}
	for _, d := range t.delivered {
		switch {
		case err == nil:
			h.end(d.id, d.out)
		case t.fenceErr == nil:
			h.end(d.id, OutcomeOutput{Unknown: true})
		default:
			h.drop(d.id)
		}
	}
	if t.fence == nil {
		return
	}
	out := ClaimOutput{OK: err == nil}
	switch {
	case err == nil:
	case t.fenceErr != nil && protocolErr(t.fenceErr) && errors.Is(err, t.fenceErr):
		// Refused by the fence: nothing was written.
	default:
		out = ClaimOutput{Unknown: true}
	}
	h.end(t.fenceOp, out)
}

// fenceSpy is a transaction's querier that tells its txSpy what it does.
type fenceSpy struct {
	store.Querier
	t *txSpy
}

func bundleName(b *domain.OutputBundle) string { return b.RunnerStatus + " " + b.Title }

func (s *fenceSpy) CreateOutputBundle(ctx context.Context, b *domain.OutputBundle) (*domain.OutputBundle, bool, error) {
	h := s.t.r.h
	id := h.begin("", OutcomeInput{Rule: RuleBundle, Key: b.WorkOrderID, Value: bundleName(b)}, s.t.call)
	stored, created, err := s.Querier.CreateOutputBundle(ctx, b)
	if err != nil {
		h.drop(id) // the statement failed: the transaction will not commit it
		return stored, created, err
	}
	s.t.delivered = append(s.t.delivered, txOp[OutcomeOutput]{id, OutcomeOutput{Created: created, Stored: bundleName(stored)}})
	return stored, created, err
}

func (s *fenceSpy) CheckFence(ctx context.Context, f store.Fence) error {
	h := s.t.r.h
	if s.t.fence != nil {
		h.drop(s.t.fenceOp)
	}
	s.t.fence = &f
	s.t.fenceOp = h.begin(f.OwnerID, ClaimInput{Kind: OpFenced, Resource: resourceOf(f.ResourceType, f.ResourceID),
		Owner: f.OwnerID, Version: f.ClaimVersion, Written: s.t.written}, s.t.call)
	err := s.Querier.CheckFence(ctx, f)
	s.t.fenceErr = err
	return err
}

func (s *fenceSpy) AcquireClaim(ctx context.Context, p store.AcquireClaimParams) (*domain.ClaimRecord, bool, error) {
	id := s.t.r.h.begin(p.OwnerID, acquireInput(p), s.t.r.h.now())
	c, ok, err := s.Querier.AcquireClaim(ctx, p)
	s.t.claims = append(s.t.claims, txOp[ClaimOutput]{id, acquireOutput(c, ok, err)})
	return c, ok, err
}

func (s *fenceSpy) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	id := s.t.r.h.begin(p.OwnerID, renewInput(p), s.t.r.h.now())
	c, err := s.Querier.RenewClaim(ctx, p)
	s.t.claims = append(s.t.claims, txOp[ClaimOutput]{id, swapOutput(c, err)})
	return c, err
}

func (s *fenceSpy) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*domain.ClaimRecord, error) {
	id := s.t.r.h.begin(p.OwnerID, releaseInput(p), s.t.r.h.now())
	c, err := s.Querier.ReleaseClaim(ctx, p)
	s.t.claims = append(s.t.claims, txOp[ClaimOutput]{id, swapOutput(c, err)})
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

// RecordPullRequest records the write of an objective's pull request
// under RulePullRequest.
func (r *recordingFull) RecordPullRequest(ctx context.Context, p store.RecordPullRequestParams) (*domain.PullRequest, bool, error) {
	h := r.rec.h
	id := h.begin("", OutcomeInput{Rule: RulePullRequest, Key: p.ObjectiveID, Value: strconv.Itoa(p.Number)}, h.now())
	pr, created, err := r.Store.RecordPullRequest(ctx, p)
	out := OutcomeOutput{Created: created}
	if err == nil {
		out.Stored = strconv.Itoa(pr.Number)
	}
	h.end(id, refusedOr(out, err, domain.ErrPullRequestConflict))
	return pr, created, err
}

// ChooseCandidate records the choice of a workorder's candidate under
// RuleChosen.
func (r *recordingFull) ChooseCandidate(ctx context.Context, p store.ChooseCandidateParams) (*domain.Candidate, error) {
	h := r.rec.h
	id := h.begin("", OutcomeInput{Rule: RuleChosen, Key: p.WorkOrderID, Value: strconv.Itoa(p.Attempt)}, h.now())
	c, err := r.Store.ChooseCandidate(ctx, p)
	var out OutcomeOutput
	if err == nil {
		out.Stored = strconv.Itoa(c.Attempt)
	}
	h.end(id, refusedOr(out, err, domain.ErrCandidatesSettled))
	return c, err
}

// refusedOr is out when err is nil, a refusal when err is refused (the
// store keeps another outcome), and an unknown outcome for any other
// error.
func refusedOr(out OutcomeOutput, err, refused error) OutcomeOutput {
	switch {
	case err == nil:
		return out
	case errors.Is(err, refused):
		return OutcomeOutput{Refused: true}
	}
	return OutcomeOutput{Unknown: true}
}

// OutcomeCounts counts h's writes of outcomes by rule, for reports.
func OutcomeCounts(h *History) map[string]int {
	out := map[string]int{}
	for _, op := range h.Outcomes() {
		out[op.Input.(OutcomeInput).Rule]++
	}
	return out
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

// OutcomeModel is the outcome rules as a sequential specification, one
// register per rule and key that keeps the first value written (see
// RuleBundle, RulePullRequest, RuleChosen). A write whose outcome is
// unknown may have been kept or not. A pull request closed by a human and
// replaced is outside the model: the scenarios close none.
func OutcomeModel() porcupine.Model {
	m := porcupine.NondeterministicModel{
		Partition: partitionBy(func(in any) string { o := in.(OutcomeInput); return o.Rule + " " + o.Key }),
		Init:      func() []any { return []any{""} },
		Step: func(state, input, output any) []any {
			stored, in, out := state.(string), input.(OutcomeInput), output.(OutcomeOutput)
			switch {
			case out.Unknown && stored == "":
				return []any{stored, in.Value}
			case out.Unknown:
				return []any{stored}
			case out.Refused:
				// Another is kept; a bundle's rule answers with it instead.
				if in.Rule != RuleBundle && stored != "" && stored != in.Value {
					return []any{stored}
				}
			case in.Rule == RuleChosen:
				if (stored == "" || stored == in.Value) && out.Stored == in.Value {
					return []any{in.Value}
				}
			case stored == "":
				if out.Created && out.Stored == in.Value {
					return []any{in.Value}
				}
			case !out.Created && out.Stored == stored && (in.Rule == RuleBundle || in.Value == stored):
				return []any{stored}
			}
			return nil
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(OutcomeInput), output.(OutcomeOutput)
			switch {
			case out.Unknown:
				return fmt.Sprintf("%s %q -> ?", in.Rule, in.Value)
			case out.Refused:
				return fmt.Sprintf("%s %q -> refused", in.Rule, in.Value)
			}
			return fmt.Sprintf("%s %q -> created %t, stored %q", in.Rule, in.Value, out.Created, out.Stored)
		},
		DescribeState: func(state any) string { return fmt.Sprintf("kept %q", state) },
	}
	return m.ToModel()
}

// CheckOutcomeHistory checks h's writes of outcomes against OutcomeModel,
// as CheckClaimHistory checks its claims, and returns how many it checked.
func CheckOutcomeHistory(t testing.TB, h *History, name string) int {
	t.Helper()
	return mustLinearize(t, OutcomeModel(), h.Outcomes(), "outcomes-"+name)
}

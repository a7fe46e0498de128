package storetest

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// Fault kinds a FaultProxy injects.
const (
	// FaultLatency delays every chunk either way for a while.
	FaultLatency = "latency"
	// FaultReset closes every open connection at once, mid-statement or
	// mid-commit, as a dropped network does.
	FaultReset = "reset"
	// FaultPartition stops forwarding without closing anything: the
	// connections stay open and silent (half-open), new ones are accepted
	// and hear nothing, until the partition heals, when the stalled ones
	// are closed.
	FaultPartition = "partition"
)

// FaultProxy is a TCP proxy that injects network faults between a client
// and a server (the store's PostgreSQL, Temporal's frontend): latency,
// resets and partitions that heal, on a schedule drawn from a seed: a
// seed gives the same faults in the same order, tick after tick, though
// not the same interleaving with the calls they fall on. It is azolla's
// own, a couple of hundred lines: a proxy library with its own randomness
// per connection (Toxiproxy's toxics) would not give even that from one
// seed, and one proxy per address is all the scenarios need.
type FaultProxy struct {
	ln       net.Listener
	upstream string

	mu          sync.Mutex
	cond        *sync.Cond
	conns       map[net.Conn]bool
	latency     time.Duration
	partitioned bool
	stalled     []net.Conn // connections opened or silenced during a partition
	counts      map[string]int
	closed      bool

	// Pace, when set before Schedule, counts the operations answered so
	// far (History.Answered): see Schedule.
	Pace func() int
}

// StartFaultProxy listens on a loopback port and forwards to upstream
// (host:port) until the test ends.
func StartFaultProxy(t testing.TB, upstream string) *FaultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	p := &FaultProxy{ln: ln, upstream: upstream, conns: map[net.Conn]bool{}, counts: map[string]int{}}
	p.cond = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *FaultProxy) Addr() string { return p.ln.Addr().String() }

// Counts is how many faults of each kind were injected.
func (p *FaultProxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Close stops the proxy and closes every connection.
func (p *FaultProxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	_ = p.ln.Close()
}

func (p *FaultProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(client)
	}
}

func (p *FaultProxy) pipe(client net.Conn) {
	server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client], p.conns[server] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { p.copy(server, client); done <- struct{}{} }()
	go func() { p.copy(client, server); done <- struct{}{} }()
	<-done
	_ = client.Close()
	_ = server.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// copy forwards from src to dst, chunk by chunk, each chunk held while a
// partition lasts and delayed by the latency of the moment.
func (p *FaultProxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.pass(src, dst) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // the peer closed, or the proxy did
		}
	}
}

// pass waits out a partition and the latency before a chunk goes on; false
// means the connection is to be dropped.
func (p *FaultProxy) pass(src, dst net.Conn) bool {
	p.mu.Lock()
	for p.partitioned && !p.closed {
		p.stalled = append(p.stalled, src, dst)
		p.cond.Wait()
	}
	live := !p.closed && p.conns[src] && p.conns[dst]
	d := p.latency
	p.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	return live
}

// SetLatency delays every chunk by d from now on (0: none).
func (p *FaultProxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d > 0 && p.latency == 0 {
		p.counts[FaultLatency]++
	}
	p.latency = d
}

// Reset closes every open connection.
func (p *FaultProxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[FaultReset]++
	for c := range p.conns {
		_ = c.Close()
	}
}

// Partition stops all forwarding until Heal.
func (p *FaultProxy) Partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.partitioned {
		p.counts[FaultPartition]++
	}
	p.partitioned = true
}

// Heal ends a partition: the connections it silenced are closed (their
// peers gave up on them), and forwarding goes on for the others.
func (p *FaultProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.stalled {
		_ = c.Close()
		delete(p.conns, c)
	}
	p.stalled, p.partitioned = nil, false
	p.cond.Broadcast()
}

// Schedule injects faults drawn from seed every tick until ctx ends:
// latency spells, resets and partitions of a few ticks that heal. It
// heals whatever is left when it returns. With Pace set, a reset or a
// partition waits until an operation was answered since the last one: on
// a loaded machine the faults slow down with the work instead of
// starving it.
func (p *FaultProxy) Schedule(ctx context.Context, seed uint64, tick time.Duration) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	t := time.NewTicker(tick)
	defer t.Stop()
	defer func() {
		p.SetLatency(0)
		p.Heal()
	}()
	partitionLeft := 0
	answered := -1
	paced := func() bool {
		if p.Pace == nil {
			return true
		}
		n := p.Pace()
		if n == answered {
			return false
		}
		answered = n
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if partitionLeft > 0 {
			if partitionLeft--; partitionLeft == 0 {
				p.Heal()
			}
			continue
		}
		switch r := rng.IntN(20); {
		case r < 3:
			p.SetLatency(time.Duration(1+rng.IntN(10)) * time.Millisecond)
		case r < 6:
			p.SetLatency(0)
		case r < 8 && paced():
			p.Reset()
		case r == 8 && paced():
			p.Partition()
			partitionLeft = 1 + rng.IntN(3)
		}
	}
}

package forge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Whose words steer an agent. A review, a line comment or any other text
// from a forge becomes an agent's input, or starts a round, only when its
// author is trusted on the repository; everything else is shown to a
// human and never taken. Trust is a forge fact: the forge is asked what
// the author may do in the repository (Forge.Permission), and
// configuration may add people or teams, or ask for more than write
// access. The rule lives here alone; every caller asks Trust.Check.
//
//	author ──listed in Users?──yes──▶ trusted
//	   │no
//	   ├──forge permission ≥ MinPermission?──yes──▶ trusted
//	   │no
//	   ├──member of one of Teams?──yes──▶ trusted
//	   │no
//	   ▼
//	not trusted: shown, never taken
//
// The zero TrustPolicy trusts no one.

// TrustPolicy is one repository's rule (forge.trusted in configuration).
type TrustPolicy struct {
	// MinPermission is the least permission the forge must give a user
	// for their words to count: PermissionWrite by default in
	// configuration, PermissionMaintain or PermissionAdmin to restrict
	// further. PermissionNone: no permission is enough, only Users and
	// Teams are trusted.
	MinPermission Permission
	// Users are trusted whatever the forge says of them.
	Users []string
	// Teams' members are trusted whatever the forge says of their
	// permission (Forge.TeamMember's names).
	Teams []string
}

// Verdict is the rule's answer for one author.
type Verdict struct {
	User    string
	Trusted bool
	// Reason says why, for a person to read and for the record: "write
	// access to acme/widgets", "listed in forge.trusted.users", "member of
	// team acme/reviewers"; or, untrusted, "may not write to acme/widgets
	// (read access)".
	Reason string
}

// Trust applies a repository's policy to authors, asking its forge.
type Trust struct {
	Forge Forge
	// Repository names the repository in reasons: owner/name.
	Repository string
	Policy     TrustPolicy
	// Cache remembers the forge's answers for a while; nil asks each
	// time.
	Cache *TrustCache
}

// Check answers whether user's words may steer an agent. An error is the
// forge not answering, or refusing to (azolla's account may not read
// permissions or a team): nothing is trusted on it.
func (t Trust) Check(ctx context.Context, user string) (Verdict, error) {
	v := Verdict{User: user}
	if strings.TrimSpace(user) == "" {
		v.Reason = "no author"
		return v, nil
	}
	for _, u := range t.Policy.Users {
		if strings.EqualFold(u, user) {
			v.Trusted, v.Reason = true, "listed in forge.trusted.users"
			return v, nil
		}
	}
	var perm Permission
	if t.Policy.MinPermission > PermissionNone {
		var err error
		if perm, err = t.permission(ctx, user); err != nil {
			return v, fmt.Errorf("ask %s what %s may do: %w", t.Repository, user, err)
		}
		if perm >= t.Policy.MinPermission {
			v.Trusted, v.Reason = true, fmt.Sprintf("%s access to %s", perm, t.Repository)
			return v, nil
		}
	}
	for _, team := range t.Policy.Teams {
		in, err := t.teamMember(ctx, team, user)
		if err != nil {
			return v, fmt.Errorf("forge.trusted.teams: is %s in %s: %w", user, team, err)
		}
		if in {
			v.Trusted, v.Reason = true, "member of team "+team
			return v, nil
		}
	}
	switch min := t.Policy.MinPermission; {
	case min == PermissionNone:
		v.Reason = "not listed in forge.trusted"
	case min == PermissionWrite && perm == PermissionNone:
		v.Reason = fmt.Sprintf("may not write to %s (no role in it)", t.Repository)
	case min == PermissionWrite:
		v.Reason = fmt.Sprintf("may not write to %s (%s access)", t.Repository, perm)
	case perm == PermissionNone:
		v.Reason = fmt.Sprintf("no role in %s, and forge.trusted asks for %s", t.Repository, min)
	default:
		v.Reason = fmt.Sprintf("%s access to %s, and forge.trusted asks for %s", perm, t.Repository, min)
	}
	return v, nil
}

func (t Trust) permission(ctx context.Context, user string) (Permission, error) {
	key := "p\x00" + strings.ToLower(user)
	if v, ok := t.Cache.get(key); ok {
		return Permission(v), nil
	}
	p, err := t.Forge.Permission(ctx, user)
	if err != nil {
		return PermissionNone, err
	}
	t.Cache.put(key, int(p))
	return p, nil
}

func (t Trust) teamMember(ctx context.Context, team, user string) (bool, error) {
	key := "t\x00" + strings.ToLower(team) + "\x00" + strings.ToLower(user)
	if v, ok := t.Cache.get(key); ok {
		return v == 1, nil
	}
	in, err := t.Forge.TeamMember(ctx, team, user)
	if err != nil {
		return false, err
	}
	v := 0
	if in {
		v = 1
	}
	t.Cache.put(key, v)
	return in, nil
}

// TrustCache remembers a forge's answers about people (permissions, team
// memberships) for at most TTL, so that a poll of many reviews by the same
// few people asks once, and a permission the forge withdrew stops counting
// by the next poll. Its methods are safe on a nil cache (nothing
// remembered) and for concurrent use.
type TrustCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]trustEntry
}

type trustEntry struct {
	value int
	at    time.Time
}

// maxTrustEntries bounds a cache: past it, expired answers are dropped,
// and when none has expired, all of them.
const maxTrustEntries = 4096

// NewTrustCache returns a cache whose answers last ttl (at most one poll
// interval); now is the clock, nil for time.Now.
func NewTrustCache(ttl time.Duration, now func() time.Time) *TrustCache {
	if now == nil {
		now = time.Now
	}
	return &TrustCache{ttl: ttl, now: now, entries: map[string]trustEntry{}}
}

func (c *TrustCache) get(key string) (int, bool) {
	if c == nil {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || c.now().Sub(e.at) >= c.ttl {
		return 0, false
	}
	return e.value, true
}

func (c *TrustCache) put(key string, value int) {
	if c == nil || c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.entries) >= maxTrustEntries {
		for k, e := range c.entries {
			if now.Sub(e.at) >= c.ttl {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxTrustEntries {
			clear(c.entries)
		}
	}
	c.entries[key] = trustEntry{value: value, at: now}
}

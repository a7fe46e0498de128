package patch

import (
	"path/filepath"
	"strings"
)

// What Options.Dir holds, and so what the retention pass (package
// retention) may find there:
//
//	mirrors/<gitops.MirrorName>      bare mirrors of the repositories
//	workspaces/<work_order_id>       the runner's workspace, on azolla/<objective_id>
//	workspaces/<work_order_id>.gate  the gate's workspace, when the runner's is not here
//	workspaces/<work_order_id>-c<k>  candidate k's workspace, on azolla/<objective_id>/c<k>
//	workspaces/.<name>.tmp-<random>  a clone of one of those in progress (gitops)
//	pushed/<work_order_id>           the push marker of a workorder (see Pushed)
//	baselines/<key>.json             the gate commands' results on a base commit (baseline.go)
//	homes/<objective_id>             the HOME of the objective's command agent, kept between its rounds
const (
	mirrorsDir    = "mirrors"
	workspacesDir = "workspaces"
	homesDir      = "homes"
	pushedDir     = "pushed"
	gateSuffix    = ".gate"
	// candidateInfix precedes a candidate's number (CandidateWorkspace).
	candidateInfix = "-c"
	tmpInfix       = ".tmp-"
)

// MirrorsDir is where the mirrors of git dir dir are.
func MirrorsDir(dir string) string { return filepath.Join(dir, mirrorsDir) }

// WorkspacesDir is where the workspaces of git dir dir are.
func WorkspacesDir(dir string) string { return filepath.Join(dir, workspacesDir) }

// HomesDir is where the agents' homes of git dir dir are, one per
// objective (docs/patches.md#agent-sessions).
func HomesDir(dir string) string { return filepath.Join(dir, homesDir) }

// EntryKind says what an entry of the workspaces directory is to its
// workorder.
type EntryKind string

// Kinds of workspace entries.
const (
	// RunnerWorkspace holds the workorder's work branch.
	RunnerWorkspace EntryKind = "workspace"
	// GateWorkspace is rebuilt from the output bundle: nothing of its own.
	GateWorkspace EntryKind = "gate"
	// TempClone is a clone not yet renamed into place: no branch yet.
	TempClone EntryKind = "temp"
	// CandidateWorkspace holds one candidate's internal branch
	// (RunCandidate): the patch chosen of it is on the work branch and in
	// the output bundle, so it has no branch of its own to account for.
	CandidateWorkspace EntryKind = "candidate"
)

// Owner is a workorder an entry of the workspaces directory may belong to.
type Owner struct {
	WorkOrderID string
	Kind        EntryKind
}

// Owners lists the workorders the workspaces entry name may belong to, the
// most literal reading first. Workorder ids may contain dots, so
// "wo-1.gate" is either workorder "wo-1.gate"'s workspace or "wo-1"'s gate
// workspace: the caller takes the first whose workorder exists; so is
// "wo-1-c2", which may be candidate 2's workspace of "wo-1". A name this
// package never writes has none.
func Owners(name string) []Owner {
	if rest, ok := strings.CutPrefix(name, "."); ok {
		i := strings.LastIndex(rest, tmpInfix)
		if i <= 0 {
			return nil
		}
		var out []Owner
		for _, o := range Owners(rest[:i]) {
			out = append(out, Owner{WorkOrderID: o.WorkOrderID, Kind: TempClone})
		}
		return out
	}
	if name == "" {
		return nil
	}
	out := []Owner{{WorkOrderID: name, Kind: RunnerWorkspace}}
	if wo, ok := strings.CutSuffix(name, gateSuffix); ok && wo != "" {
		out = append(out, Owner{WorkOrderID: wo, Kind: GateWorkspace})
	}
	if wo, ok := candidateOf(name); ok {
		out = append(out, Owner{WorkOrderID: wo, Kind: CandidateWorkspace})
	}
	return out
}

// candidateOf reads a name CandidateWorkspace writes, <wo>-c<k> with k a
// positive number without leading zeros, as its workorder's.
func candidateOf(name string) (string, bool) {
	i := strings.LastIndex(name, candidateInfix)
	if i <= 0 {
		return "", false
	}
	k := name[i+len(candidateInfix):]
	if k == "" || k[0] == '0' || len(k) > 9 || strings.Trim(k, "0123456789") != "" {
		return "", false
	}
	return name[:i], true
}

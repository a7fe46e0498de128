package patchgen

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc"
)

// artifactDirName is the directory, beside the run report outside the
// worktree, in which a command may leave files of its run:
// $AZOLLA_ARTIFACT_DIR. A report's transcript path is relative to it.
const artifactDirName = "artifacts"

// maxTranscriptRead bounds how much of a transcript file is read: its end.
const maxTranscriptRead = 4 << 20

// stderrKeptBytes is how much of the end of stderr a transcript keeps.
const stderrKeptBytes = 1 << 20

// Tail is the end of a stream of a run.
type Tail struct {
	// Text is the end of what was written, valid UTF-8.
	Text string
	// Total counts every byte written, kept or not.
	Total int64
}

// Transcript is what a run said, the material of the transcript the patch
// flow stores (compressed, redacted, size-capped): the transcript of its
// run report, inline or read from the artifact directory, and the ends of
// its stdout and stderr. Nothing in it is redacted yet.
type Transcript struct {
	// Report is the report's transcript ("" when the report has none).
	Report Tail
	// ReportFrom says where Report came from: "inline" or the file's
	// path relative to $AZOLLA_ARTIFACT_DIR.
	ReportFrom string
	// Problem says why the report's transcript file could not be read.
	Problem string
	Stdout  Tail
	Stderr  Tail
}

// Empty reports whether t holds nothing at all.
func (t *Transcript) Empty() bool {
	return t == nil || (t.Report.Total == 0 && t.Problem == "" && t.Stdout.Total == 0 && t.Stderr.Total == 0)
}

// Render is t as one text document: stdout, stderr, then the report's
// transcript, each under a header that says how much of it is shown. The
// transcript comes last because a document too long to keep is cut at its
// start: the end of a run is where it says how it went.
func (t *Transcript) Render() string {
	if t.Empty() {
		return ""
	}
	var b strings.Builder
	section := func(name string, tl Tail) {
		if tl.Total == 0 {
			return
		}
		fmt.Fprintf(&b, "==== %s", name)
		if n := int64(len(tl.Text)); n < tl.Total {
			fmt.Fprintf(&b, " (last %d of %d bytes)", n, tl.Total)
		}
		b.WriteString(" ====\n")
		b.WriteString(tl.Text)
		if !strings.HasSuffix(tl.Text, "\n") {
			b.WriteString("\n")
		}
	}
	section("stdout", t.Stdout)
	section("stderr", t.Stderr)
	if t.Problem != "" {
		fmt.Fprintf(&b, "==== transcript ====\n(not read: %s)\n", t.Problem)
	}
	section("transcript ("+t.ReportFrom+")", t.Report)
	return b.String()
}

// transcript gathers a run's transcript; artifactDir is
// $AZOLLA_ARTIFACT_DIR, read before the run's directory is removed.
func transcript(rep *domain.RunReport, artifactDir string, stdout, stderr *proc.TailBuffer) *Transcript {
	t := &Transcript{Stdout: Tail{Text: stdout.Text(), Total: stdout.Total()},
		Stderr: Tail{Text: stderr.Text(), Total: stderr.Total()}}
	switch {
	case rep == nil || rep.Transcript == nil:
	case rep.Transcript.Path != "":
		t.ReportFrom = rep.Transcript.Path
		text, total, err := readArtifact(artifactDir, rep.Transcript.Path)
		if err != nil {
			t.Problem = err.Error()
		} else {
			t.Report = Tail{Text: text, Total: total}
		}
	default:
		t.ReportFrom = "inline"
		t.Report = Tail{Text: rep.Transcript.Text, Total: int64(len(rep.Transcript.Text))}
	}
	if t.Empty() {
		return nil
	}
	return t
}

// readArtifact reads the end of the regular file rel under dir. The schema
// already refuses a path that climbs out; a symbolic link is refused here,
// since it could point anywhere the worker may read.
func readArtifact(dir, rel string) (text string, total int64, err error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if !inside(dir, path) {
		return "", 0, fmt.Errorf("%s is outside $AZOLLA_ARTIFACT_DIR", rel)
	}
	for p := path; p != dir && inside(dir, p); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return "", 0, fmt.Errorf("transcript file %s: %w", rel, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return "", 0, fmt.Errorf("transcript file %s: a symbolic link is not followed", rel)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("transcript file %s: %w", rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, fmt.Errorf("transcript file %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("transcript file %s: not a regular file", rel)
	}
	tail := &proc.TailBuffer{Max: maxTranscriptRead}
	if fi.Size() > maxTranscriptRead {
		if _, err := f.Seek(fi.Size()-maxTranscriptRead, io.SeekStart); err != nil {
			return "", 0, fmt.Errorf("transcript file %s: %w", rel, err)
		}
	}
	if _, err := io.Copy(tail, io.LimitReader(f, maxTranscriptRead)); err != nil {
		return "", 0, fmt.Errorf("transcript file %s: %w", rel, err)
	}
	text = tail.Text()
	if fi.Size() > maxTranscriptRead {
		// A cut fell inside a rune: TailBuffer only knows when it cut.
		for len(text) > 0 && strings.HasPrefix(text, "\uFFFD") {
			text = strings.TrimPrefix(text, "\uFFFD")
		}
	}
	return text, max(fi.Size(), int64(len(text))), nil
}

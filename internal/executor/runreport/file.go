package runreport

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/azolla/azolla/internal/domain"
)

// FileName is the name of the report file in a run's private directory,
// outside the worktree, given to the executor as $AZOLLA_REPORT_FILE.
const FileName = "report.json"

// MaxFileBytes bounds a report file.
const MaxFileBytes = 1 << 20

// ReadFile reads the report an executor may have written at path. No file
// is no report and no problem; a file that cannot be read, is too large or
// fails the schema is no report and a problem, one line for the run's
// notes: a bad report never fails a run. A report that names no source is
// the executor's.
func ReadFile(path string) (r *domain.RunReport, problem string) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("run report not read: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Sprintf("run report not read: %v", err)
	case len(data) > MaxFileBytes:
		return nil, fmt.Sprintf("run report ignored: larger than %d bytes", MaxFileBytes)
	}
	rep, err := Parse(data)
	if err != nil {
		return nil, "run report ignored: " + err.Error()
	}
	if rep.Source == "" {
		rep.Source = domain.ReportFromExecutor
	}
	return &rep, ""
}

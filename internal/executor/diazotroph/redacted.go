package diazotroph

import (
	"context"

	"github.com/azolla/azolla/internal/executor/redact"
)

// Redacted returns d with every secret r knows replaced in what it returns
// (a result's title, content, notes, PR description and run report; a
// check's reason)
// before the runner, the gate or a remote worker writes or sends it. A
// Checker stays a Checker.
//
// A patch's content is safe to redact here: PATCH_DIAZOTROPH refuses a
// patch holding a secret before committing it, so a committed diff never
// holds one.
func Redacted(d Diazotroph, r *redact.Redactor) Diazotroph {
	if r.Empty() {
		return d
	}
	base := redacted{d: d, r: r}
	if c, ok := d.(Checker); ok {
		return redactedChecker{redacted: base, c: c}
	}
	return base
}

type redacted struct {
	d Diazotroph
	r *redact.Redactor
}

func (x redacted) Type() string { return x.d.Type() }

func (x redacted) Execute(ctx context.Context, req Request) (Result, error) {
	res, err := x.d.Execute(ctx, req)
	res.Title = x.r.String(res.Title)
	res.Content = x.r.String(res.Content)
	res.Notes = x.r.String(res.Notes)
	res.Metadata.PRDescriptionDraft = x.r.String(res.Metadata.PRDescriptionDraft)
	if rep := res.Metadata.RunReport; rep != nil {
		// The report's words are the executor's, like its notes.
		c := *rep
		c.Model, c.Summary, c.SessionID = x.r.String(c.Model), x.r.String(c.Summary), x.r.String(c.SessionID)
		if c.Transcript != nil {
			t := *c.Transcript
			t.Text = x.r.String(t.Text)
			c.Transcript = &t
		}
		res.Metadata.RunReport = &c
	}
	return res, x.err(err)
}

// err redacts err's message, which becomes an activity failure in the
// workflow's history, keeping what it wraps for errors.Is and errors.As.
func (x redacted) err(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: x.r.String(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

type redactedChecker struct {
	redacted
	c Checker
}

func (x redactedChecker) Check(ctx context.Context, c Check) (Verdict, error) {
	v, err := x.c.Check(ctx, c)
	v.Reason = x.r.String(v.Reason)
	return v, x.err(err)
}

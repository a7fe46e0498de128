package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
)

// A capture is a note for triage, not a file store: bounded so that a
// mistaken `--file big.log` is refused at once instead of being frozen into
// every triage snapshot that takes it.
const (
	maxCaptureBytes = 64 << 10
	maxSourceBytes  = 100
	// captureListWidth bounds the first line shown by capture list.
	captureListWidth = 60
)

func (a *app) captureCmd() *cobra.Command {
	return groupCmd("capture", "Capture raw notes for triage and list them",
		a.captureAddCmd(), a.captureListCmd())
}

func (a *app) captureAddCmd() *cobra.Command {
	var file, source string
	cmd := &cobra.Command{
		Use:   "add [TEXT | -]",
		Short: "Capture a note (status PENDING) and print its id",
		Long: `Capture a note for triage: TEXT as given, "-" for stdin, or --file F.
The capture is stored PENDING together with its CAPTURE_READY event, in one
transaction, the event is handed to the task-management track (triage), and
the capture's id is printed alone on stdout. Text may span lines; it
is stored as written and shown with its control characters escaped. At most
64 KiB; NUL bytes and invalid UTF-8 are refused.`,
		Args: cobra.MaximumNArgs(1),
	}
	fl := cmd.Flags()
	fl.StringVarP(&file, "file", "f", "", `read the capture from this file ("-" for stdin)`)
	fl.StringVar(&source, "source", "cli", "where the capture comes from (one line, at most 100 bytes)")
	var content string
	parse := func(cmd *cobra.Command, args []string) error {
		if err := checkSource(source); err != nil {
			return usageError(err)
		}
		var err error
		content, err = captureContent(cmd, args, file)
		return err
	}
	a.withSession(cmd, preamble{parse: parse}, func(cmd *cobra.Command, _ []string, c *call) error {
		now := store.NowOr(time.Time{})
		capture := &domain.CaptureBuffer{CaptureBufferID: newCaptureID(now), Source: source, Content: content,
			Status: domain.CapturePending, CreatedAt: now, UpdatedAt: now}
		ev, err := store.AddCapture(cmd.Context(), c.store, capture, now)
		if err != nil {
			return classify(err)
		}
		a.handToTrack(cmd, c.session, ev)
		_, err = fmt.Fprintln(cmd.OutOrStdout(), capture.CaptureBufferID)
		return err
	})
	return cmd
}

// captureContent reads the capture from the one place the command line
// names and checks it. A command line naming none, or two, is a usage
// error; content that cannot be taken is an input error.
func captureContent(cmd *cobra.Command, args []string, file string) (string, error) {
	var (
		raw []byte
		err error
	)
	switch {
	case len(args) == 1 && file != "":
		return "", usageError(errors.New("give the capture as TEXT or --file, not both"))
	case len(args) == 1 && args[0] == "-":
		raw, err = readBounded(cmd.InOrStdin())
	case len(args) == 1:
		raw = []byte(args[0])
	case file == "-":
		raw, err = readBounded(cmd.InOrStdin())
	case file != "":
		raw, err = readCaptureFile(file)
	default:
		return "", usageError(errors.New(`give the capture as TEXT, "-" for stdin, or --file F`))
	}
	if err != nil {
		return "", inputError(err)
	}
	if err := checkCapture(raw); err != nil {
		return "", inputError(err)
	}
	return string(raw), nil
}

func readCaptureFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read capture: %w", err)
	}
	defer func() { _ = f.Close() }()
	return readBounded(f)
}

// readBounded reads at most one byte more than a capture may hold, so a
// huge input is refused without being read whole.
func readBounded(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxCaptureBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read capture: %w", err)
	}
	return b, nil
}

// checkCapture refuses what cannot be a capture. Control characters other
// than NUL are kept: they are escaped wherever a capture is shown.
func checkCapture(b []byte) error {
	switch {
	case len(b) > maxCaptureBytes:
		return fmt.Errorf("capture is larger than %d bytes (64 KiB): capture a summary, or a path to the file", maxCaptureBytes)
	case len(bytes.TrimSpace(b)) == 0:
		return errors.New("capture is empty")
	case !utf8.Valid(b):
		i := 0
		for i < len(b) {
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return fmt.Errorf("capture is not UTF-8 text: invalid byte 0x%02x at byte %d", b[i], i)
	}
	// PostgreSQL text cannot hold NUL, and no note needs one.
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return fmt.Errorf("capture holds a NUL byte at byte %d", i)
	}
	return nil
}

func checkSource(s string) error {
	switch {
	case s == "":
		return errors.New("--source must not be empty")
	case len(s) > maxSourceBytes:
		return fmt.Errorf("--source is %d bytes, at most %d", len(s), maxSourceBytes)
	}
	if err := textsafe.CheckLine(s); err != nil {
		return fmt.Errorf("--source must be one printable line: %w", err)
	}
	return nil
}

// newCaptureID is time-ordered for people reading lists, and random after
// that: "cap-20261123T155106Z-3f9a1c4d".
func newCaptureID(now time.Time) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "cap-" + now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

func (a *app) captureListCmd() *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List captures, oldest first",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().StringVar(&status, "status", "", "only captures with this status (PENDING, PROCESSED)")
	parse := func(*cobra.Command, []string) error {
		return checkStatusFlag(status, domain.CapturePending, domain.CaptureProcessed)
	}
	a.withSession(cmd, preamble{output: true, parse: parse}, func(cmd *cobra.Command, _ []string, c *call) error {
		list, err := c.store.ListCaptureBuffers(cmd.Context(), store.ListCaptureBuffersParams{Status: status})
		if err != nil {
			return err
		}
		if c.json {
			if list == nil {
				list = []*domain.CaptureBuffer{}
			}
			return writeJSON(cmd.OutOrStdout(), list)
		}
		out := cmd.OutOrStdout()
		fmt.Fprintf(out, "%-30s  %-9s  %-12s  %-20s  %s\n", "ID", "STATUS", "SOURCE", "CREATED", "TEXT")
		for _, cb := range list {
			// Captures may have been written straight into the database:
			// every field is rendered safe, not only the text.
			fmt.Fprintf(out, "%-30s  %-9s  %-12s  %-20s  %s\n", textsafe.Line(cb.CaptureBufferID), textsafe.Line(cb.Status),
				textsafe.Line(cb.Source), cb.CreatedAt.UTC().Format(time.RFC3339), textsafe.Line(firstLine(cb.Content)))
		}
		return nil
	})
	return cmd
}

// firstLine is a capture's first non-blank line, cut to captureListWidth
// runes (the cut marked with "…").
func firstLine(content string) string {
	line := ""
	for l := range strings.Lines(content) {
		if t := strings.TrimSpace(l); t != "" {
			line = t
			break
		}
	}
	if utf8.RuneCountInString(line) <= captureListWidth {
		return line
	}
	r := []rune(line)
	return string(r[:captureListWidth-1]) + "…"
}

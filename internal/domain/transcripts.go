package domain

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// TranscriptRef is what an output bundle says of its run's transcript
// (metadata.transcript): how long it is and whether it was cut. The text
// itself lives in the transcripts table, keyed by the bundle's workorder,
// and `azolla objective log` prints it.
//
// Gzip carries the text, compressed, only while the bundle travels from
// the run to the store: in the local runner's write and in a remote
// worker's complete request alike. CreateOutputBundle moves it into the
// transcripts table in the bundle's own write, so a stored bundle never
// holds it, and a bundle that already existed (a retried run) keeps the
// transcript written with it.
type TranscriptRef struct {
	// Bytes is the length of the stored text, uncompressed.
	Bytes int64 `json:"bytes"`
	// OriginalBytes is the length of the text before the cap.
	OriginalBytes int64 `json:"original_bytes"`
	// Truncated says the start was cut to keep the end within the cap.
	Truncated bool `json:"truncated,omitempty"`
	// Gzip is the text, gzip-compressed, in transit only (see above).
	Gzip []byte `json:"gzip,omitempty"`
}

// Transcript is a workorder's stored transcript: what its run said, already
// redacted and capped, gzip-compressed.
type Transcript struct {
	WorkOrderID   string
	Gzip          []byte
	Bytes         int64
	OriginalBytes int64
	Truncated     bool
	CreatedAt     time.Time
}

// maxTranscriptText bounds the text Text decompresses, whatever a row
// holds.
const maxTranscriptText = 64 << 20

// maxTranscriptGzip bounds a stored transcript's compressed size.
const maxTranscriptGzip = 16 << 20

// NewTranscriptRef compresses text (already redacted) into a reference
// that carries it to the store. A text longer than maxBytes keeps its end
// and starts with a line saying how much was cut. "" or a maxBytes of 0
// keeps nothing: nil.
func NewTranscriptRef(text string, maxBytes int) (*TranscriptRef, error) {
	if text == "" || maxBytes <= 0 {
		return nil, nil
	}
	ref := &TranscriptRef{OriginalBytes: int64(len(text))}
	if len(text) > maxBytes {
		cut := len(text) - maxBytes
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		text = fmt.Sprintf("[azolla: transcript cut to its last %d of %d bytes (executor.transcript_max)]\n",
			len(text)-cut, ref.OriginalBytes) + text[cut:]
		ref.Truncated = true
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := io.WriteString(zw, text); err != nil {
		return nil, fmt.Errorf("compress transcript: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress transcript: %w", err)
	}
	ref.Bytes, ref.Gzip = int64(len(text)), buf.Bytes()
	return ref, nil
}

// Text decompresses the transcript.
func (t *Transcript) Text() (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(t.Gzip))
	if err != nil {
		return "", fmt.Errorf("transcript of %s: %w", t.WorkOrderID, err)
	}
	defer zr.Close()
	b, err := io.ReadAll(io.LimitReader(zr, maxTranscriptText+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("transcript of %s: %w", t.WorkOrderID, err)
	case len(b) > maxTranscriptText:
		return "", fmt.Errorf("transcript of %s: longer than %d bytes uncompressed", t.WorkOrderID, maxTranscriptText)
	}
	return string(b), nil
}

// Check refuses a transcript that cannot be stored.
func (t *Transcript) Check() error {
	switch {
	case t.WorkOrderID == "":
		return errors.New("transcript: work_order_id is required")
	case len(t.Gzip) == 0:
		return fmt.Errorf("transcript of %s: no text", t.WorkOrderID)
	case len(t.Gzip) > maxTranscriptGzip:
		return fmt.Errorf("transcript of %s: %d compressed bytes, more than %d", t.WorkOrderID, len(t.Gzip), maxTranscriptGzip)
	case t.Bytes < 0 || t.OriginalBytes < 0:
		return fmt.Errorf("transcript of %s: negative length", t.WorkOrderID)
	}
	return nil
}

// SplitTranscript returns b with its metadata's transcript reduced to the
// reference a stored bundle keeps, and the transcript the reference
// carried to be stored with it (nil when it carried none). b is not
// changed.
func SplitTranscript(b *OutputBundle) (*OutputBundle, *Transcript) {
	ref := b.Metadata.Transcript
	if ref == nil || len(ref.Gzip) == 0 {
		return b, nil
	}
	out, kept := *b, *ref
	kept.Gzip = nil
	out.Metadata.Transcript = &kept
	return &out, &Transcript{WorkOrderID: b.WorkOrderID, Gzip: ref.Gzip, Bytes: ref.Bytes,
		OriginalBytes: ref.OriginalBytes, Truncated: ref.Truncated, CreatedAt: b.CreatedAt}
}

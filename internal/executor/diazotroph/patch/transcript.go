package patch

import (
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/patchgen"
)

// transcript is what the generator's run said, as the output bundle
// carries it to the store (store.TranscriptRef): redacted of the worker's
// secrets first, so that no cut can leave part of a secret behind, then
// capped to TranscriptMax keeping its end, and compressed. nil when the run
// said nothing or no transcript is kept.
func (p *Patch) transcript(t *patchgen.Transcript) *domain.TranscriptRef {
	if t.Empty() || p.o.TranscriptMax <= 0 {
		return nil
	}
	ref, err := domain.NewTranscriptRef(p.o.Secrets.String(t.Render()), p.o.TranscriptMax)
	if err != nil {
		// Compressing into memory does not fail; a transcript is not worth
		// a failed run if it ever did.
		return nil
	}
	return ref
}

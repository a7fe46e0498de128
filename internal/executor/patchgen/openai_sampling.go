package patchgen

import (
	"fmt"
	"strconv"
)

// How the openai generator varies its candidates (docs/patches.md#several-candidates).
// Candidate 1 asks exactly what a single run asks, so that one attempt of
// several is never worse than the run it replaces. Candidate k > 1 asks
// with seed k, and with the configured temperature raised by
// candidateTemperatureStep for each candidate after the first, up to
// candidateTemperatureMax: far enough apart that the replies differ, not
// so far that a diff's exact context lines start to drift. A temperature
// configured above the cap is kept, never lowered. Without a configured
// temperature none is sent, since some models refuse the field: the seed
// alone varies those.
const (
	candidateTemperatureStep = 0.2
	candidateTemperatureMax  = 1.2
)

// sampling is what a request asks of the model's sampling.
type sampling struct {
	temperature *float64
	seed        *int
}

// sampling is the sampling of candidate k (0: not a candidate run).
func (g *OpenAI) sampling(k int) sampling {
	s := sampling{temperature: g.temperature}
	if k <= 1 {
		return s
	}
	seed := k
	s.seed = &seed
	if g.temperature != nil {
		t := *g.temperature
		if t < candidateTemperatureMax {
			t = min(t+candidateTemperatureStep*float64(k-1), candidateTemperatureMax)
		}
		s.temperature = &t
	}
	return s
}

// String says what a candidate's request asked, for its notes.
func (s sampling) String() string {
	out := "sampling:"
	if s.temperature != nil {
		out += " temperature " + strconv.FormatFloat(*s.temperature, 'f', -1, 64)
	} else {
		out += " endpoint's default temperature"
	}
	if s.seed != nil {
		out += fmt.Sprintf(", seed %d", *s.seed)
	}
	return out
}

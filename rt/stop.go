package rt

import "strings"

// StopStrings finds stop strings in streamed text across token
// boundaries: text that might be the start of a stop string is held back
// until the next piece decides, so no part of a stop string is ever sent,
// and the stop string itself is never sent. The zero value (no stop
// strings) passes text through.
type StopStrings struct {
	Stops   []string // the stop strings ("" entries are ignored)
	pending string
	stopped bool
}

// Push adds generated text and returns what can be sent now. After a
// stop string is found, Push returns the text before it, stopped is true,
// and everything later is dropped.
func (s *StopStrings) Push(text string) (out string, stopped bool) {
	if s.stopped {
		return "", true
	}
	s.pending += text
	cut := -1
	for _, st := range s.Stops {
		if st == "" {
			continue
		}
		if i := strings.Index(s.pending, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		out, s.pending, s.stopped = s.pending[:cut], "", true
		return out, true
	}
	hold := 0
	for _, st := range s.Stops {
		for n := min(len(st)-1, len(s.pending)); n > hold; n-- {
			if strings.HasSuffix(s.pending, st[:n]) {
				hold = n
				break
			}
		}
	}
	out = s.pending[:len(s.pending)-hold]
	s.pending = s.pending[len(s.pending)-hold:]
	return out, false
}

// Flush returns the held-back text at the end of generation (it was not a
// stop string after all).
func (s *StopStrings) Flush() string {
	out := s.pending
	s.pending = ""
	if s.stopped {
		return ""
	}
	return out
}

// Stopped reports whether a stop string has been found.
func (s *StopStrings) Stopped() bool { return s.stopped }

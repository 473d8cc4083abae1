package server

import "strings"

// stopper finds stop strings in streamed text across token boundaries:
// text that might be the start of a stop string is held back until the
// next piece decides, so no part of a stop string is ever sent, and the
// stop string itself is never sent.
type stopper struct {
	stops   []string
	pending string
	stopped bool
}

// push adds generated text and returns what can be sent now. After a
// stop string is found, push returns the text before it, stopped is true,
// and everything later is dropped.
func (s *stopper) push(text string) (out string, stopped bool) {
	if s.stopped {
		return "", true
	}
	s.pending += text
	cut := -1
	for _, st := range s.stops {
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
	for _, st := range s.stops {
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

// flush returns the held-back text at the end of generation (it was not a
// stop string after all).
func (s *stopper) flush() string {
	out := s.pending
	s.pending = ""
	if s.stopped {
		return ""
	}
	return out
}

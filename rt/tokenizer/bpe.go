package tokenizer

import (
	"container/heap"
	"strings"
	"unicode/utf8"
)

// symbol is a run of the word being merged.
type symbol struct {
	start, end int // byte range in the word
	id         int32
	prev, next int // -1 at the ends
	dead       bool
}

// candidate is a possible merge of symbols left and left's next.
type candidate struct {
	prio  float64 // smaller merges first
	pos   int     // ties: leftmost first
	left  int
	right int
	size  int // length of left+right when queued; stale if it changed
	id    int32
}

type queue []candidate

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio < q[j].prio
	}
	return q[i].pos < q[j].pos
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(candidate)) }
func (q *queue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// pair returns the merge of symbols a and b, if there is one.
func (t *Tokenizer) pair(word string, a, b *symbol) (candidate, bool) {
	switch t.kind {
	case spmScores:
		id, ok := t.vocab[word[a.start:b.end]]
		if !ok {
			return candidate{}, false
		}
		var s float32
		if int(id) < len(t.scores) {
			s = t.scores[id]
		}
		return candidate{prio: -float64(s), id: id}, true
	default:
		if a.id < 0 || b.id < 0 {
			return candidate{}, false
		}
		m, ok := t.merges[pairKey(a.id, b.id)]
		if !ok {
			return candidate{}, false
		}
		return candidate{prio: float64(m.rank), id: m.id}, true
	}
}

// bpe appends the ids of one pre-tokenized word (in the model's alphabet).
func (t *Tokenizer) bpe(word string, ids []int32) []int32 {
	if t.ignoreMrg || t.wholeNewlines && strings.Trim(word, "\n") == "" {
		if id, ok := t.vocab[word]; ok {
			return append(ids, id)
		}
	}
	syms := make([]symbol, 0, len(word))
	for i := 0; i < len(word); {
		_, w := utf8.DecodeRuneInString(word[i:])
		id, ok := t.vocab[word[i:i+w]]
		if !ok {
			id = -1
		}
		n := len(syms)
		syms = append(syms, symbol{start: i, end: i + w, id: id, prev: n - 1, next: n + 1})
		i += w
	}
	if len(syms) == 0 {
		return ids
	}
	syms[len(syms)-1].next = -1
	var q queue
	push := func(l int) {
		r := syms[l].next
		if l < 0 || r < 0 {
			return
		}
		c, ok := t.pair(word, &syms[l], &syms[r])
		if !ok {
			return
		}
		c.pos, c.left, c.right, c.size = syms[l].start, l, r, syms[r].end-syms[l].start
		heap.Push(&q, c)
	}
	for i := range syms {
		push(i)
	}
	for q.Len() > 0 {
		c := heap.Pop(&q).(candidate)
		l, r := &syms[c.left], &syms[c.right]
		if l.dead || r.dead || l.next != c.right || r.end-l.start != c.size {
			continue
		}
		l.end, l.id, l.next = r.end, c.id, r.next
		r.dead = true
		if r.next >= 0 {
			syms[r.next].prev = c.left
		}
		if l.prev >= 0 {
			push(l.prev)
		}
		push(c.left)
	}
	lastUnk := false
	for i := 0; i >= 0; i = syms[i].next {
		s := &syms[i]
		if s.id >= 0 {
			ids = append(ids, s.id)
			lastUnk = false
			continue
		}
		if t.kind == spmScores {
			if id, ok := t.vocab[word[s.start:s.end]]; ok {
				ids = append(ids, id)
				continue
			}
		}
		if t.byteFallbk {
			ok := true
			for j := s.start; j < s.end; j++ {
				if t.byteTok[word[j]] < 0 {
					ok = false
				}
			}
			if ok {
				for j := s.start; j < s.end; j++ {
					ids = append(ids, t.byteTok[word[j]])
				}
				lastUnk = false
				continue
			}
		}
		if t.unk >= 0 && !(t.fuseUnk && lastUnk) {
			ids = append(ids, t.unk)
		}
		lastUnk = true
	}
	return ids
}

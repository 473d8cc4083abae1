package dsl

// suggest returns ` (did you mean X?)` for the closest candidate within a
// small edit distance of name, or "".
func suggest(name string, candidates []string) string {
	best := closest(name, candidates)
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// closest returns the candidate within a small edit distance of name,
// other than name itself, or "".
func closest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD || (d == bestD && best != "" && c < best) {
			best, bestD = c, d
		}
	}
	if best == name {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DidYouMean returns ` (did you mean X?)` for the candidate closest to name
// within a small edit distance, or "": the hint archc's diagnostics append,
// for callers outside the package (a missing checkpoint tensor against the
// checkpoint's names, for instance).
func DidYouMean(name string, candidates []string) string { return suggest(name, candidates) }

// Closest returns the candidate within a small edit distance of name
// (under 3 bytes), other than name itself, or "": DidYouMean's choice.
func Closest(name string, candidates []string) string { return closest(name, candidates) }

// unknownCallHint is the hint of an unknown callee: the closest primitive
// (a misspelt primitive is the common case), else the closest block or
// module of the family, named with its kind (`block mlp`, `module q_proj`).
func unknownCallHint(name string, prims, blocks, modules []string) string {
	prim, blk, mod := meant(name, prims, blocks, modules)
	switch {
	case prim != "":
		return " (did you mean " + prim + "?)"
	case blk != "":
		return " (did you mean block " + blk + "?)"
	case mod != "":
		return " (did you mean module " + mod + "?)"
	}
	return ""
}

// meant returns the primitive, else the block or module (whichever is
// closer; the block on a tie), that an unknown callee name most likely
// misspells, as unknownCallHint names it; all "" when none is close.
func meant(name string, prims, blocks, modules []string) (prim, blk, mod string) {
	if p := closest(name, prims); p != "" {
		return p, "", ""
	}
	b, m := closest(name, blocks), closest(name, modules)
	switch {
	case m == "":
		return "", b, ""
	case b == "" || editDistance(name, m) < editDistance(name, b):
		return "", "", m
	}
	return "", b, ""
}

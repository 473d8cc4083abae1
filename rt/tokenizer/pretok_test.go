package tokenizer

import (
	"compress/bzip2"
	"encoding/json"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// pretokGolden is testdata/pretok/pretok.json.bz2, written by gen.py with
// Hugging Face tokenizers: for each group of tokenizer.ggml.pre names, its
// Hugging Face pre_tokenizer and normalizer, and the pieces they give for
// every text.
type pretokGolden struct {
	Texts []string `json:"texts"`
	Cases []struct {
		Names        []string        `json:"names"`
		Normalizer   json.RawMessage `json:"normalizer"`
		PreTokenizer json.RawMessage `json:"pre_tokenizer"`
		Pieces       [][]string      `json:"pieces"`
	} `json:"cases"`
	Splits []struct {
		Pattern  string     `json:"pattern"`
		Behavior string     `json:"behavior"`
		Invert   bool       `json:"invert"`
		Texts    []string   `json:"texts"`
		Pieces   [][]string `json:"pieces"`
	} `json:"splits"`
}

func readPretokGolden(t *testing.T) *pretokGolden {
	t.Helper()
	f, err := os.Open("testdata/pretok/pretok.json.bz2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := io.ReadAll(bzip2.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	var g pretokGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// TestPreTokenizersMatchHF: every GGUF pre-tokenizer (ggufPre), and the
// same configuration read from tokenizer.json (hfPre), splits text into the
// pieces Hugging Face tokenizers gives.
func TestPreTokenizersMatchHF(t *testing.T) {
	g := readPretokGolden(t)
	covered := map[string]bool{}
	for _, c := range g.Cases {
		if len(c.Pieces) != len(g.Texts) {
			t.Fatalf("%v: %d piece lists for %d texts", c.Names, len(c.Pieces), len(g.Texts))
		}
		check := func(t *testing.T, tok *Tokenizer) {
			t.Helper()
			bad := 0
			for i, s := range g.Texts {
				if tok.normalize != nil {
					s = tok.normalize(s)
				}
				got := tok.preTokenize(s, true)
				if !equalStrings(got, c.Pieces[i]) && bad < 5 {
					bad++
					t.Errorf("%q\n got %q\nwant %q", s, got, c.Pieces[i])
				}
			}
		}
		for _, name := range c.Names {
			covered[name] = true
			t.Run("gguf/"+name, func(t *testing.T) {
				spec, ok := ggufPre[name]
				if !ok {
					t.Fatalf("tokenizer.ggml.pre %q is not in ggufPre", name)
				}
				steps, err := spec.steps()
				if err != nil {
					t.Fatal(err)
				}
				tok := &Tokenizer{kind: byteBPE, pre: steps, escapeWS: spec.escapeWS}
				if spec.raw {
					tok.kind = spmMerges
				}
				if spec.nfc {
					tok.normalize = norm.NFC.String
				}
				check(t, tok)
			})
		}
		t.Run("hf/"+c.Names[0], func(t *testing.T) {
			tok := &Tokenizer{}
			var byteLevel bool
			pre, err := tok.hfPre(c.PreTokenizer, &byteLevel)
			if err != nil {
				t.Fatal(err)
			}
			tok.pre, tok.kind = pre, byteBPE
			if !byteLevel {
				tok.kind = spmMerges
			}
			if tok.normalize, _, err = hfNormalizer(c.Normalizer); err != nil {
				t.Fatal(err)
			}
			check(t, tok)
		})
	}
	var missing []string
	for name := range ggufPre {
		if !covered[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no Hugging Face golden for %s: add them to testdata/pretok/gen.py and rerun it", strings.Join(missing, ", "))
	}
}

// TestSplitMatchesHF: one Split step (regexSplitter) gives Hugging Face's
// pieces for each behavior, with invert, and for the Oniguruma features
// that fromOniguruma rewrites.
func TestSplitMatchesHF(t *testing.T) {
	g := readPretokGolden(t)
	if len(g.Splits) == 0 {
		t.Fatal("no splits in the golden file")
	}
	for _, c := range g.Splits {
		b, ok := splitBehaviors[c.Behavior]
		if !ok {
			t.Fatalf("behavior %q", c.Behavior)
		}
		s, err := regexSplitter(c.Pattern, b, c.Invert)
		if err != nil {
			t.Errorf("%q: %v", c.Pattern, err)
			continue
		}
		for i, text := range c.Texts {
			var got []string
			for _, p := range s.split([]piece{{s: text, atStart: true}}) {
				got = append(got, p.s)
			}
			if !equalStrings(got, c.Pieces[i]) {
				t.Errorf("Split(%q, %s, invert=%v) of %q\n got %q\nwant %q", c.Pattern, c.Behavior, c.Invert, text, got, c.Pieces[i])
			}
		}
	}
}

// TestFromOnigurumaRefuses: Oniguruma features with no rewrite are errors,
// not silently different matches.
func TestFromOnigurumaRefuses(t *testing.T) {
	for _, pat := range []string{`[a-z&&[aeiou]]`, `[a-z&&[^aeiou]x]`, `[[:alpha:]]`, `[a[^b]]`, `[\W]`, `[\H]`} {
		if _, err := regexSplitter(pat, splitIsolated, false); err == nil {
			t.Errorf("%q: no error", pat)
		}
	}
}

// TestHFByteLevelPrefixPerPiece: ByteLevel's add_prefix_space applies to
// every piece an earlier step made, and Digits after ByteLevel sees the
// byte alphabet, as in Hugging Face tokenizers.
func TestHFByteLevelPrefixPerPiece(t *testing.T) {
	tok := &Tokenizer{kind: byteBPE}
	var byteLevel bool
	pre, err := tok.hfPre(json.RawMessage(`{"type":"Sequence","pretokenizers":[
		{"type":"Split","pattern":{"String":","},"behavior":"Removed"},
		{"type":"ByteLevel","add_prefix_space":true,"use_regex":false},
		{"type":"Digits","individual_digits":false}]}`), &byteLevel)
	if err != nil {
		t.Fatal(err)
	}
	tok.pre = pre
	// "½" is bytes C2 BD, "Â½" in the alphabet, where "½" is a number.
	got := tok.preTokenize("a,b c,½", true)
	want := []string{"Ġa", "ĠbĠc", "ĠÂ", "½"} // as tokenizers 0.23 gives
	if !equalStrings(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

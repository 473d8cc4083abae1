package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/archc/archc/rt"
)

// vocabCache writes the model's vocabulary file for the worker's grammar
// engine once (rt/iree/grammar.py reads it): {"tokens": [hex bytes per
// id], "special": [ids], "eos": [ids]}, named by its content's hash in the
// temporary directory, so servers of the same model share one file.
type vocabCache struct {
	once sync.Once
	path string
	err  error
}

func (c *vocabCache) get(m *rt.Model, text *rt.Text) (string, error) {
	c.once.Do(func() { c.path, c.err = writeVocab(m, text) })
	return c.path, c.err
}

func writeVocab(m *rt.Model, text *rt.Text) (string, error) {
	tok := text.Tokenizer
	n := tok.VocabSize()
	v := struct {
		Tokens  []string `json:"tokens"`
		Special []int32  `json:"special"`
		EOS     []int32  `json:"eos"`
	}{Tokens: make([]string, n), Special: []int32{}, EOS: m.EOS}
	for i := range n {
		id := int32(i)
		v.Tokens[i] = hex.EncodeToString(tok.TokenBytes(id))
		if tok.IsSpecial(id) {
			v.Special = append(v.Special, id)
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	path := filepath.Join(os.TempDir(), "archc-vocab-"+hex.EncodeToString(sum[:8])+".json")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp, err := os.CreateTemp(os.TempDir(), "archc-vocab-*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing the vocabulary for constrained decoding: %v", err)
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("writing the vocabulary for constrained decoding: %v", err)
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("writing the vocabulary for constrained decoding: %v", err)
	}
	return path, nil
}

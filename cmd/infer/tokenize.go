package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/archc/archc/rt/tokenizer"
)

// tokenizeCmd is `infer tokenize`: print the token ids of a text.
type tokenizeCmd struct {
	Model      string  `required:"" help:"Model: a Hugging Face folder (with tokenizer.json) or a .gguf file."`
	Text       *string `help:"Text to tokenize (default: read standard input)."`
	JSON       bool    `name:"json" help:"Print {\"ids\": [...]} instead of space-separated ids."`
	AddSpecial bool    `name:"add-special" help:"Add BOS/EOS as the model's tokenizer configuration says."`
}

// Run tokenizes the text and prints the ids.
func (c *tokenizeCmd) Run(ctx context.Context) error {
	tok, err := loadTokenizer(c.Model)
	if err != nil {
		return err
	}
	var text string
	if c.Text != nil {
		text = *c.Text
	} else {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fmt.Errorf("reading standard input: %v", err)
		}
		text = string(b)
	}
	ids, err := tok.Encode(text, c.AddSpecial)
	if err != nil {
		return err
	}
	if c.JSON {
		if ids == nil {
			ids = []int32{}
		}
		return json.NewEncoder(os.Stdout).Encode(map[string][]int32{"ids": ids})
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	fmt.Println(strings.Join(parts, " "))
	return nil
}

// loadTokenizer reads the tokenizer of a model folder or GGUF file.
func loadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--model %s: no such file or folder (want a Hugging Face model folder or a .gguf file)", path)
	}
	if st.IsDir() {
		return tokenizer.FromHF(path)
	}
	return tokenizer.FromGGUF(path)
}

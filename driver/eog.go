package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/archc/archc/formats/gguf"
)

// eogTexts are the token texts llama.cpp treats as ending generation when
// a GGUF vocabulary holds them (llama-vocab.cpp's end-of-turn candidates,
// plus <|eom_id|> and gpt-oss's <|return|> and <|call|>).
var eogTexts = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
	"<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<|eom_id|>", "<|return|>", "<|call|>",
}

// ggufEndTokens adds to eos the end-of-generation ids of a GGUF file, as
// llama.cpp collects them: tokenizer.ggml.eos_token_id, eot_token_id and
// eom_token_id, and every vocabulary token whose text is in eogTexts. So a
// Llama 3 GGUF (eos <|end_of_text|>, eot <|eot_id|>) stops a chat turn at
// <|eot_id|>.
func ggufEndTokens(f *gguf.File, eos []int32) []int32 {
	out := slices.Clone(eos)
	add := func(id int64) {
		if id >= 0 && id <= 1<<31-1 && !slices.Contains(out, int32(id)) {
			out = append(out, int32(id))
		}
	}
	for _, k := range []string{"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"} {
		switch v, _ := f.Value(k); x := v.(type) {
		case uint64:
			if x <= 1<<31-1 {
				add(int64(x))
			}
		case int64:
			add(x)
		}
	}
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	for i, t := range tokens {
		if slices.Contains(eogTexts, t) {
			add(int64(i))
		}
	}
	return out
}

// eosTokens reads eos_token_id (an int or a list) from generation_config.json
// in dir if present, else from the config.
func eosTokens(dir string, raw map[string]any) ([]int32, error) {
	src := raw
	if dir != "" {
		path := filepath.Join(dir, "generation_config.json")
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			var gc map[string]any
			if err := json.Unmarshal(data, &gc); err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			if gc["eos_token_id"] != nil {
				src = gc
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	var out []int32
	add := func(v any) error {
		switch x := v.(type) {
		case int64:
			out = append(out, int32(x))
		case float64:
			out = append(out, int32(x))
		default:
			return fmt.Errorf("eos_token_id: want an int or a list of ints, got %v", v)
		}
		return nil
	}
	switch v := src["eos_token_id"].(type) {
	case nil:
	case []any:
		for _, e := range v {
			if err := add(e); err != nil {
				return nil, err
			}
		}
	default:
		if err := add(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

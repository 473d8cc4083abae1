package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/archc/archc/rt/tokenizer"
)

// FromHF returns the chat template of a Hugging Face model folder: the
// chat_template of tokenizer_config.json (a string, or the entry named
// "default" of a list), else chat_template.jinja.
func FromHF(dir string) (string, error) {
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	raw, err := os.ReadFile(cfgPath)
	if err == nil {
		var cfg struct {
			ChatTemplate json.RawMessage `json:"chat_template"`
		}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return "", fmt.Errorf("%s: %v", cfgPath, err)
		}
		if len(cfg.ChatTemplate) > 0 && string(cfg.ChatTemplate) != "null" {
			var s string
			if json.Unmarshal(cfg.ChatTemplate, &s) == nil {
				return s, nil
			}
			var named []struct {
				Name     string `json:"name"`
				Template string `json:"template"`
			}
			if err := json.Unmarshal(cfg.ChatTemplate, &named); err != nil {
				return "", fmt.Errorf("%s: chat_template is neither a string nor a list of {name, template}", cfgPath)
			}
			for _, n := range named {
				if n.Name == "default" {
					return n.Template, nil
				}
			}
			return "", fmt.Errorf("%s: chat_template has no entry named \"default\"", cfgPath)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %v", cfgPath, err)
	}
	jinjaPath := filepath.Join(dir, "chat_template.jinja")
	b, err := os.ReadFile(jinjaPath)
	if err == nil {
		return string(b), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %v", jinjaPath, err)
	}
	return "", fmt.Errorf("%s: no chat template (neither chat_template in tokenizer_config.json nor chat_template.jinja): the model may not be a chat model", dir)
}

// FromGGUF returns the tokenizer.chat_template metadata of a GGUF file.
func FromGGUF(path string) (string, error) {
	md, err := tokenizer.ReadGGUFMetadata(path)
	if err != nil {
		return "", err
	}
	s, ok := md.String("tokenizer.chat_template")
	if !ok {
		return "", fmt.Errorf("%s: no tokenizer.chat_template in the metadata: the model may not be a chat model", path)
	}
	return s, nil
}

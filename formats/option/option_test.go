package option

import (
	"fmt"
	"testing"
)

func TestRename(t *testing.T) {
	flags := map[string]string{"MaxTokens": "--max-tokens"}
	err := fmt.Errorf("generate: %w", Errorf("MaxTokens", -1, "give %s, 0 or more", "the number of new tokens"))
	if got := err.Error(); got != "generate: MaxTokens -1: give the number of new tokens, 0 or more" {
		t.Errorf("library error %q", got)
	}
	if got := Rename(err, flags).Error(); got != "--max-tokens -1: give the number of new tokens, 0 or more" {
		t.Errorf("renamed %q", got)
	}
	if got := Rename(Errorf("Chat", nil, "no chat template"), flags).Error(); got != "Chat: no chat template" {
		t.Errorf("a name the front end does not map: %q", got)
	}
	ref := Errorf("MaxLen", 8, "lower {MaxTokens} or raise {MaxLen}")
	if got := ref.Error(); got != "MaxLen 8: lower MaxTokens or raise MaxLen" {
		t.Errorf("references in the library's terms: %q", got)
	}
	if got := Rename(ref, map[string]string{"MaxLen": "--max-len", "MaxTokens": "--max-tokens"}).Error(); got != "--max-len 8: lower --max-tokens or raise --max-len" {
		t.Errorf("references renamed: %q", got)
	}
	plain := fmt.Errorf("other")
	if Rename(plain, flags) != plain {
		t.Error("an error that is no *Error changed")
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 tokens", 1: "1 token", 2: "2 tokens"} {
		if got := Count(n, "token", "tokens"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

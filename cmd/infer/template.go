package main

import (
	"fmt"
	"os"

	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/chat"
)

// readChatTemplate reads a --chat-template file and checks that it
// renders a user turn ("" for no file), before any model is read.
func readChatTemplate(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--chat-template: %v", err)
	}
	if _, err := chat.Render(string(b), []chat.Message{{Role: "user", Content: "hi"}}, chat.Options{AddGenerationPrompt: true}); err != nil {
		return "", fmt.Errorf("--chat-template %s: %v", file, err)
	}
	return string(b), nil
}

// setChatTemplate gives text its chat template: the contents of file when
// given (--chat-template, replacing the model's), else the model's own,
// else, for a GGUF file whose general.architecture is a family with one
// fixed turn format (chat.Default), the built-in one. It returns where the
// template came from ("" when there is none).
func setChatTemplate(text *rt.Text, file string, gf *gguf.File) (string, error) {
	if file != "" {
		tmpl, err := readChatTemplate(file)
		if err != nil {
			return "", err
		}
		text.ChatTemplate = tmpl
		return file, nil
	}
	if text.ChatTemplate != "" {
		return "the model's", nil
	}
	if gf != nil {
		arch, _ := gf.Value("general.architecture")
		if a, ok := arch.(string); ok {
			if t, ok := chat.Default(a); ok {
				text.ChatTemplate = t
				return "built-in " + a, nil
			}
		}
	}
	return "", nil
}

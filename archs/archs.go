// Package archs embeds the built-in family files (*.arch). Each file
// describes one model family; see package dsl for the language.
package archs

import "embed"

// FS holds the built-in .arch files at its root.
//
//go:embed *.arch
var FS embed.FS

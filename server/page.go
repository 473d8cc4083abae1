package server

import (
	"embed"
	"io/fs"
	"net/http"
)

// page holds the chat page, embedded in the binary.
//
//go:embed page
var page embed.FS

// pageHandler serves the chat page at / (and its files).
func pageHandler() http.Handler {
	sub, err := fs.Sub(page, "page")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.FileServerFS(sub)
}

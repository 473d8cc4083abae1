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

// pageRoutes serves the chat page at / and its files at /NAME, one route
// each, so that other paths get the API's JSON 404.
func pageRoutes(mux *http.ServeMux) {
	sub, err := fs.Sub(page, "page")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(sub)
	mux.Handle("GET /{$}", files)
	entries, _ := fs.ReadDir(sub, ".")
	for _, e := range entries {
		if e.Name() != "index.html" { // FileServer redirects it to /
			mux.Handle("GET /"+e.Name(), files)
		}
	}
}

package server

import (
	"bufio"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestChoicesShared: on each of servingFixtures, a request for n = 3
// sampled choices hung up after its first chunk leaves no slot in use;
// then each choice of an n = 3 request, whose prompt is prefilled once
// and copied into two more slots, equals the request for one choice with
// seed+i (prefilled in its own slot).
func TestChoicesShared(t *testing.T) {
	for _, dir := range servingFixtures {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, e, url := servedDir(t, dir, Config{})
			run(t, e)
			prompt := idList(testPrompt(23))
			body := func(extra string) string {
				return fmt.Sprintf(`{"prompt": %s, "max_tokens": 12, "temperature": 1, "top_p": 0.9, %s}`, prompt, extra)
			}

			resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body(`"seed": 5, "n": 3, "max_tokens": 90, "stream": true`)))
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() && !strings.HasPrefix(sc.Text(), "data: ") {
			}
			resp.Body.Close()
			for i := 0; i < 500 && (e.Stats().Running > 0 || e.Stats().Queued > 0); i++ {
				time.Sleep(20 * time.Millisecond)
			}
			if st := e.Stats(); st.Running != 0 || st.Queued != 0 || st.KVTokens != 0 {
				t.Errorf("after an n=3 stream hung up: %+v, want no slot in use", st)
			}

			shared := e.Stats().SharedPrefills
			code, out := post(t, url+"/v1/completions", body(`"seed": 5, "n": 3`))
			if code != 200 {
				t.Fatalf("n=3: %d %v", code, out)
			}
			if got := e.Stats().SharedPrefills - shared; got != 2 {
				t.Errorf("n=3: %d slots got the prompt by a copy, want 2", got)
			}
			for i, c := range out["choices"].([]any) {
				got := ids(c.(map[string]any)["token_ids"])
				code, one := post(t, url+"/v1/completions", body(fmt.Sprintf(`"seed": %d`, 5+i)))
				if code != 200 {
					t.Fatalf("seed %d: %d %v", 5+i, code, one)
				}
				if want := ids(one["choices"].([]any)[0].(map[string]any)["token_ids"]); !slices.Equal(got, want) {
					t.Errorf("n=3: choice %d %v, the seed %d request's %v", i, got, 5+i, want)
				}
			}
		})
	}
}

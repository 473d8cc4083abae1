package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/archc/archc/rt"
)

// Serving tests on the hybrid fixture (a KV cache and conv windows per
// slot, hybridFixture): under load, and a second chat turn that reuses its
// slot's state.

// hybridPrompts are the soak's prompts with their single-sequence greedy
// references: the first ones of several lengths (longer than the conv
// kernel), then each continued by its own reference and a few more tokens
// (a second turn, which may land in a slot that holds the first turn's
// state, or in one that does not).
func hybridPrompts(t *testing.T, m *rt.Model, maxNew int) ([][]int32, [][]int32) {
	t.Helper()
	var prompts, want [][]int32
	gen := func(p []int32) {
		g, err := m.Generate(context.Background(), p, rt.GenerateOptions{MaxTokens: maxNew})
		if err != nil {
			t.Fatal(err)
		}
		prompts, want = append(prompts, p), append(want, g.Tokens)
	}
	for _, n := range []int{1, 4, 11, 23, 37} {
		gen(testPrompt(n))
	}
	for i := range len(prompts) {
		next := append(slices.Clone(prompts[i]), want[i]...)
		gen(append(next, 5, 77, 140))
	}
	return prompts, want
}

// TestHybridSoak runs 32 concurrent clients for ARCHC_LOADTEST_SECONDS
// (default 10) against the hybrid fixture with 3 slots: greedy requests,
// streamed or not, some hanging up mid-stream, many answered 429 (a queue
// of 8). Every completed request must equal its single-sequence run,
// whichever slot and cached prefix it got, and afterwards no slot is in
// use.
func TestHybridSoak(t *testing.T) {
	secs := 10
	if v, err := strconv.Atoi(os.Getenv("ARCHC_LOADTEST_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	const clients, maxNew = 32, 6
	dir := hybridFixture
	if d := os.Getenv("ARCHC_SOAK_FIXTURE"); d != "" { // e.g. ../golden/testdata/llama-tied, to compare
		dir = d
	}
	m, e, url := servedDir(t, dir, Config{})
	prompts, want := hybridPrompts(t, m, maxNew)
	run(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	var completed, cached, hungUp, busy atomic.Int64
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				k := (c*3 + i*7) % len(prompts)
				streamed, hangUp := (c+i)%2 == 0, (c+i)%7 == 0
				body := fmt.Sprintf(`{"prompt": %s, "max_tokens": %d, "temperature": 0, "stream": %v}`, idList(prompts[k]), maxNew, streamed)
				if hangUp { // a streamed request whose client goes away: its slot must be freed and its state never taken
					body := strings.Replace(body, `"stream": false`, `"stream": true`, 1)
					req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(body))
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						continue // the test's deadline
					}
					resp.Body.Close()
					if resp.StatusCode == 200 {
						hungUp.Add(1)
					}
					continue
				}
				// Read in full: compared with its run alone.
				var got []int32
				if streamed {
					var code int
					if _, got, _, code = streamTimed(t, url, body); code == 429 {
						busy.Add(1)
						time.Sleep(time.Duration(50+(c*37+i*11)%100) * time.Millisecond)
						continue
					}
				} else {
					code, out := post(t, url+"/v1/completions", body)
					if code == 429 {
						busy.Add(1)
						time.Sleep(time.Duration(50+(c*37+i*11)%100) * time.Millisecond)
						continue
					}
					if code != 200 {
						t.Errorf("prompt %d: %d %v", k, code, out)
						continue
					}
					got = ids(out["choices"].([]any)[0].(map[string]any)["token_ids"])
					if d, ok := out["usage"].(map[string]any)["prompt_tokens_details"].(map[string]any); ok && d["cached_tokens"].(float64) > 0 {
						cached.Add(1)
					}
				}
				completed.Add(1)
				if !slices.Equal(got, want[k]) {
					t.Errorf("client %d, prompt %d (%d tokens): served %v, alone %v", c, k, len(prompts[k]), got, want[k])
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d s, %d clients: %d requests compared with their runs alone (%d non-streamed with a reused prefix), %d hung up, %d answered 429",
		secs, clients, completed.Load(), cached.Load(), hungUp.Load(), busy.Load())
	if completed.Load() == 0 {
		t.Error("no request completed")
	}
	for i := 0; ; i++ {
		st := e.Stats()
		if st.Running == 0 && st.Queued == 0 {
			break
		}
		if i == 100 {
			t.Fatalf("after the soak: %d running, %d queued", st.Running, st.Queued)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHybridSecondTurn: a second chat turn (the first turn's prompt and
// answer, then new tokens) on the hybrid fixture reuses the slot's state
// (cached_tokens: the first turn's tokens but its last answer token) and
// gives the tokens of its run alone; the same turn on a server whose slots
// hold other tokens recomputes its whole prompt. Both times to first token
// are logged (a measurement, not a timed test).
func TestHybridSecondTurn(t *testing.T) {
	const maxNew = 8
	m, e, url := servedDir(t, hybridFixture, Config{})
	first := testPrompt(60)
	g1, err := m.Generate(context.Background(), first, rt.GenerateOptions{MaxTokens: maxNew})
	if err != nil {
		t.Fatal(err)
	}
	second := append(append(slices.Clone(first), g1.Tokens...), 9, 31, 200, 17)
	g2, err := m.Generate(context.Background(), second, rt.GenerateOptions{MaxTokens: maxNew})
	if err != nil {
		t.Fatal(err)
	}
	run(t, e)
	ask := func(p []int32) (time.Duration, []int32, int) {
		ttft, got, n, _ := streamTimed(t, url, fmt.Sprintf(`{"prompt": %s, "max_tokens": %d, "temperature": 0, "stream": true, "stream_options": {"include_usage": true}}`, idList(p), maxNew))
		return ttft, got, n
	}
	// Cold: every slot holds other tokens (three unrelated prompts).
	for _, n := range []int{5, 6, 7} {
		if code, out := post(t, url+"/v1/completions", fmt.Sprintf(`{"prompt": %s, "max_tokens": 2, "temperature": 0}`, idList(testPrompt(n)))); code != 200 {
			t.Fatalf("%d %v", code, out)
		}
	}
	cold, got, _ := ask(second)
	if !slices.Equal(got, g2.Tokens) {
		t.Errorf("second turn, recomputed: %v, alone %v", got, g2.Tokens)
	}
	// Warm: the first turn just ran; its slot holds the state after all of
	// its tokens but the last answer token.
	if _, got, _ := ask(first); !slices.Equal(got, g1.Tokens) {
		t.Errorf("first turn: %v, alone %v", got, g1.Tokens)
	}
	warm, got, n := ask(second)
	if !slices.Equal(got, g2.Tokens) {
		t.Errorf("second turn, reusing the first's state: %v, alone %v", got, g2.Tokens)
	}
	if want := len(first) + maxNew - 1; n != want {
		t.Errorf("second turn: %d cached prompt tokens, want %d (the first turn's tokens held in its slot)", n, want)
	}
	t.Logf("second turn of %d prompt tokens: time to first token %v recomputed, %v reusing the slot's state (%d tokens cached)", len(second), cold, warm, n)
}

// streamTimed streams body and returns the time until its first token,
// the tokens, the usage chunk's cached prompt tokens and the status (429:
// nothing else).
func streamTimed(t *testing.T, url, body string) (time.Duration, []int32, int, int) {
	t.Helper()
	start := time.Now()
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == 429 {
		return 0, nil, 0, 429
	}
	if resp.StatusCode != 200 {
		t.Errorf("stream: %d", resp.StatusCode)
		return 0, nil, 0, resp.StatusCode
	}
	var ttft time.Duration
	var got []int32
	cached := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk map[string]any
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, c := range chunk["choices"].([]any) {
			if tid, ok := c.(map[string]any)["token_ids"]; ok && tid != nil {
				if got == nil {
					ttft = time.Since(start)
				}
				got = append(got, ids(tid)...)
			}
		}
		if u, ok := chunk["usage"].(map[string]any); ok {
			if d, ok := u["prompt_tokens_details"].(map[string]any); ok {
				cached = int(d["cached_tokens"].(float64))
			}
		}
	}
	return ttft, got, cached, 200
}

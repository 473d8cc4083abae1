package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/archc/archc/internal/testmodels"
)

// chatPage loads the chat page in headless Chromium, sends a message and
// waits for the streamed answer; a screenshot goes to the artifacts folder
// (ARCHC_ARTIFACTS, else .cache/artifacts in the repository).
func chatPage(t *testing.T, url, key string) {
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium: scripts/test.sh installs Debian's chromium")
		}
		t.Skip("no chromium in PATH (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1000, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for _, step := range []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(url + "/"),
		chromedp.SetValue(chromedp.CSS("#apikey"), key),
		chromedp.SetValue(chromedp.CSS("#temperature"), "0"),
		chromedp.SetValue(chromedp.CSS("#max_tokens"), "24"),
		chromedp.SetValue(chromedp.CSS("#input"), "Say hello in one short sentence."),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".msg.assistant .meta")), // appended when the stream ends
	} {
		if _, err := chromedp.Run(ctx, step); err != nil {
			t.Fatalf("chat page: %v", err)
		}
	}
	answer, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".msg.assistant")))
	if err != nil {
		t.Fatal(err)
	}
	model, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#model")))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("ARCHC_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(filepath.Dir(testmodels.Dir()), "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		p := filepath.Join(dir, "chat-page.png")
		if err := os.WriteFile(p, shot, 0o644); err == nil {
			t.Logf("screenshot: %s", p)
		}
	}
	t.Logf("model %q, answer %q", model, answer)
	if strings.Contains(answer, "Error:") || !strings.Contains(answer, "finish: ") || len(strings.TrimSpace(strings.Split(answer, "finish:")[0])) == 0 {
		t.Errorf("the page shows no streamed answer: %q", answer)
	}
	if model == "" || model == "…" {
		t.Errorf("the page did not list the model: %q", model)
	}
}

package main

import (
	"context"
	"fmt"
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
	chatPageWith(t, url, key, pageChat{prompt: "Say hello in one short sentence.", maxTokens: 24, shot: "chat-page.png"})
}

// pageChat is one message typed into the chat page: its text, an image
// attached through the file picker (""), max_tokens, the answer expected
// ("": any non-empty one) and the screenshot's file name.
type pageChat struct {
	prompt, image string
	maxTokens     int
	want, shot    string
}

func chatPageWith(t *testing.T, url, key string, pc pageChat) {
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
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(url + "/"),
		chromedp.SetValue(chromedp.CSS("#apikey"), key),
		chromedp.SetValue(chromedp.CSS("#temperature"), "0"),
		chromedp.SetValue(chromedp.CSS("#max_tokens"), fmt.Sprint(pc.maxTokens)),
		chromedp.SetValue(chromedp.CSS("#input"), pc.prompt),
	}
	if pc.image != "" {
		abs, err := filepath.Abs(pc.image)
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, chromedp.SetUploadFiles(chromedp.CSS("#image"), []string{abs}),
			chromedp.WaitVisible(chromedp.CSS("#attached img"))) // read into a data: URL
	}
	steps = append(steps,
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".msg.assistant .meta")), // appended when the stream ends
	)
	for _, step := range steps {
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
		p := filepath.Join(dir, pc.shot)
		if err := os.WriteFile(p, shot, 0o644); err == nil {
			t.Logf("screenshot: %s", p)
		}
	}
	t.Logf("model %q, answer %q", model, answer)
	if strings.Contains(answer, "Error:") || !strings.Contains(answer, "finish: ") || len(strings.TrimSpace(strings.Split(answer, "finish:")[0])) == 0 {
		t.Errorf("the page shows no streamed answer: %q", answer)
	}
	if pc.want != "" && strings.TrimSpace(strings.Split(answer, "finish:")[0]) != strings.TrimSpace(pc.want) {
		t.Errorf("the page shows %q, want %q", strings.Split(answer, "finish:")[0], pc.want)
	}
	if model == "" || model == "…" {
		t.Errorf("the page did not list the model: %q", model)
	}
}

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/clitest"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
)

// visionFixture is the Idefics3 (SmolVLM) fixture of golden/testdata.
const visionFixture = "../../golden/testdata/vision/idefics3"

// TestServeImages serves the Idefics3 fixture and sends it an image
// through the official clients — chat completions, Responses and
// Messages (testdata/vision_clients.py) — each answer equal to the HF
// oracle's greedy text for that image and prompt, usage counting the
// image tokens; then each kind of bad image input is a 400 naming its
// field, and the server answers on.
func TestServeImages(t *testing.T) {
	venv, err := ireetool.FindVenv()
	if err != nil {
		testmodels.NeedIREE(t)
	}
	py := filepath.Join(venv, "bin", "python")
	if err := exec.Command(py, "-c", "import openai, anthropic").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the openai and anthropic clients are not installed in %s: scripts/test.sh installs scripts/requirements-test.txt", venv)
		}
		t.Skip("the openai and anthropic clients are not installed: pip install -r scripts/requirements-test.txt into the venv")
	}
	var oracle struct {
		Cases []struct {
			Name     string   `json:"name"`
			Images   []string `json:"images"`
			InputIDs []int32  `json:"input_ids"`
			Tokens   []int32  `json:"tokens"`
			Messages []struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		} `json:"cases"`
	}
	b, err := os.ReadFile(filepath.Join(visionFixture, "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &oracle); err != nil {
		t.Fatal(err)
	}
	c := oracle.Cases[0] // image_text: [image, text]
	if c.Name != "image_text" {
		t.Fatalf("the fixture's first case is %s, want image_text", c.Name)
	}
	text, err := rt.LoadText(visionFixture)
	if err != nil {
		t.Fatal(err)
	}
	want := text.Tokenizer.Decode(c.Tokens)
	images := filepath.Join(visionFixture, "images")
	// The plan of golden's execOptions (2 slots, decode 1 and 2, one 32-token
	// prefill chunk): the module TestVisionExecution compiled, from the cache.
	srv := startServe(t, visionFixture, "--api-key", "k", "--max-batch", "2", "--prefill-buckets", "32", "--image-dir", images, "--max-image-pixels", "5000")
	imageFile := filepath.Join(images, c.Images[0])
	out, err := exec.Command(py, "testdata/vision_clients.py", srv.url, "k", imageFile, c.Messages[0].Content[1].Text).CombinedOutput()
	if err != nil {
		t.Fatalf("vision_clients.py: %v\n%s", err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("vision_clients.py printed %s", out)
	}
	for _, api := range []string{"chat", "responses", "messages"} {
		if got[api] != want {
			t.Errorf("%s: answered %q, the HF oracle %q", api, got[api], want)
		}
		if n, _ := got[api+"_prompt_tokens"].(float64); int(n) != len(c.InputIDs) {
			t.Errorf("%s: usage counts %v prompt tokens, the HF processor's prompt has %d (image tokens included)", api, got[api+"_prompt_tokens"], len(c.InputIDs))
		}
	}

	t.Run("chat page", func(t *testing.T) {
		chatPageWith(t, srv.url, "k", pageChat{prompt: c.Messages[0].Content[1].Text, image: imageFile, maxTokens: len(c.Tokens), want: want, shot: "chat-page-image.png"})
	})

	pngURL := func(w, h int) string {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			img.Pix[i] = byte(i)
		}
		img.Set(0, 0, color.RGBA{255, 0, 0, 255})
		var buf bytes.Buffer
		if err := pngEncode(&buf, img); err != nil {
			t.Fatal(err)
		}
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	good := pngURL(20, 20)
	part := func(url string) string { return fmt.Sprintf(`{"type": "image_url", "image_url": {"url": %q}}`, url) }
	chatBody := func(parts ...string) string {
		return fmt.Sprintf(`{"model": "m", "max_tokens": 4, "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [%s, {"type": "text", "text": "What is it?"}]}]}`, strings.Join(parts, ", "))
	}
	tiffHeader := "data:image/tiff;base64," + base64.StdEncoding.EncodeToString([]byte("II*\x00\x08\x00\x00\x00\x00\x00"))
	many := make([]string, 9)
	for i := range many {
		many[i] = part(good)
	}
	for _, tc := range []struct {
		name, body, param, says string
	}{
		{"corrupt", chatBody(part("data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nnot a png")))), "messages[1].content[0].image_url", "png"},
		{"truncated", chatBody(part(good[:len(good)/2] + "AAAA")), "messages[1].content[0].image_url", ""},
		{"not base64", chatBody(part("data:image/png;base64,!!!")), "messages[1].content[0].image_url", "base64"},
		{"unknown format", chatBody(part(tiffHeader)), "messages[1].content[0].image_url", "jpeg"},
		{"over the pixel limit", chatBody(part(pngURL(100, 100))), "messages[1].content[0].image_url", "limit is 5000 (this server's --max-image-pixels)"},
		{"too many images", chatBody(many...), "messages[1].content[8].image_url", "at most 8"},
		{"http off", chatBody(part("http://127.0.0.1:1/x.png")), "messages[1].content[0].image_url", "--allow-image-urls"},
		{"file outside the directory", chatBody(part("file://" + mustAbs(t, "testdata/vision_clients.py"))), "messages[1].content[0].image_url", "outside"},
		{"detail low", chatBody(`{"type": "image_url", "image_url": {"url": "` + good + `", "detail": "low"}}`), "messages[1].content[0].image_url.detail", "low"},
		{"image in an assistant turn", `{"model": "m", "max_tokens": 4, "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [` + part(good) + `]}, {"role": "user", "content": "?"}]}`, "messages[1].content", "user turns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, res := postJSONKey(t, srv.url+"/v1/chat/completions", "k", tc.body)
			e, _ := res["error"].(map[string]any)
			if code != 400 || e == nil || e["param"] != tc.param || !strings.Contains(strings.ToLower(fmt.Sprint(e["message"])), strings.ToLower(tc.says)) {
				t.Errorf("%d %v; want a 400 naming %s and saying %q", code, res, tc.param, tc.says)
			}
		})
	}
	// Image placeholders with no image attached are refused as the
	// processor refuses a count that differs from the images' (they ran
	// as plain tokens): in a completions prompt's text and ids. (Chat:
	// server's TestImagePlaceholdersWithoutImages; this fixture's template
	// renders only list contents, and a turn without images is a string.)
	ph, err := text.Tokenizer.Encode("<image>", false)
	if err != nil || len(ph) != 1 {
		t.Fatalf("<image> is %v (%v), want one token", ph, err)
	}
	for _, tc := range []struct{ path, body, param, says string }{
		{"/v1/completions", `{"max_tokens": 4, "prompt": "<image>hi"}`, "prompt", "found 1 <image> tokens and 0 images"},
		{"/v1/completions", fmt.Sprintf(`{"max_tokens": 4, "prompt": [1, %d, 2]}`, ph[0]), "prompt", "found 1 image placeholder tokens"},
	} {
		code, res := postJSONKey(t, srv.url+tc.path, "k", tc.body)
		e, _ := res["error"].(map[string]any)
		if code != 400 || e == nil || e["param"] != tc.param || !strings.Contains(fmt.Sprint(e["message"]), tc.says) {
			t.Errorf("%s %s: %d %v; want a 400 naming %s and saying %q", tc.path, tc.body, code, res, tc.param, tc.says)
		}
	}
	// A file: URL under --image-dir is read; the server still answers.
	code, res := postJSONKey(t, srv.url+"/v1/chat/completions", "k", chatBody(part("file://"+mustAbs(t, imageFile))))
	if code != 200 {
		t.Fatalf("a file: URL under --image-dir: %d %v", code, res)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var pngEncode = png.Encode

// postJSONKey posts body with the API key and returns the status and the
// JSON answer.
func postJSONKey(t *testing.T, url, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return resp.StatusCode, out
}

// TestGenerateImageGGUF: `infer generate --image` on a vision fixture's
// GGUF text twin with its mmproj twin (found beside the model, or given
// with --mmproj) expands the prompt as the HF processor does and answers
// the HF oracle's greedy tokens, as the fixture's folder does. Qwen2-VL's
// mmproj records no min / max pixels (the processor takes the class
// defaults): its twin is given the fixture's as image_min_pixels /
// image_max_pixels, the keys llama.cpp reads for them.
func TestGenerateImageGGUF(t *testing.T) {
	testmodels.NeedIREE(t)
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	for _, c := range []struct {
		fixture string
		args    []string
	}{
		{"idefics3", nil},
		{"gemma3", []string{"--mmproj", "../../golden/testdata/vision/gemma3/mmproj.f32.gguf"}},
		{"llava", nil},
		{"qwen2_vl", nil},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			dir := filepath.Join("../../golden/testdata/vision", c.fixture)
			want := imageTextCase(t, dir)
			if c.fixture == "qwen2_vl" {
				mmproj := filepath.Join(t.TempDir(), "mmproj.gguf")
				testmodels.RewriteGGUF(t, testmodels.GGUFTwin(t, filepath.Join(dir, "mmproj.f32.gguf")), mmproj, func(e *testmodels.GGUFEdit) {
					e.Set("clip.vision.image_min_pixels", uint32(256)) // the fixture's size.shortest_edge
					e.Set("clip.vision.image_max_pixels", uint32(512)) // and longest_edge
				})
				c.args = []string{"--mmproj", mmproj}
			}
			args := append([]string{"generate", "--model", testmodels.GGUFTwin(t, filepath.Join(dir, "model.f32.gguf")), "--chat",
				"--image", filepath.Join(dir, "images", "rgb_40x60.png"), "--prompt", "Can you describe this image?",
				"--max-tokens", fmt.Sprint(len(want.Tokens)), "--json", "-q"}, c.args...)
			r := clitest.Run(t, bin, args...)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			var got struct {
				PromptTokens []int32 `json:"prompt_tokens"`
				Tokens       []int32 `json:"tokens"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
				t.Fatalf("%v: %s", err, r.Stdout)
			}
			if fmt.Sprint(got.PromptTokens) != fmt.Sprint(want.InputIDs) {
				t.Errorf("prompt ids %v, the processor's %v", got.PromptTokens, want.InputIDs)
			}
			if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
				t.Errorf("tokens %v, the oracle's %v", got.Tokens, want.Tokens)
			}
		})
	}
}

// TestServeImageGGUF: `infer serve` on a vision fixture's GGUF text twin
// with its mmproj twin named by --mmproj (gemma3: the mmproj is not beside
// the model) reads an image_url content part and answers the HF oracle's
// greedy text for it, usage counting the processor's prompt (image tokens
// included), as TestGenerateImageGGUF's `infer generate` does. One slot, so
// the module is generate's (one compile for both tests).
func TestServeImageGGUF(t *testing.T) {
	testmodels.NeedIREE(t)
	dir := "../../golden/testdata/vision/gemma3"
	c := imageTextCase(t, dir)
	text, err := rt.LoadText(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := text.Tokenizer.Decode(c.Tokens)
	images := filepath.Join(dir, "images")
	srv := startServe(t, testmodels.GGUFTwin(t, filepath.Join(dir, "model.f32.gguf")), "--api-key", "k", "--max-batch", "1",
		"--mmproj", filepath.Join(dir, "mmproj.f32.gguf"), "--image-dir", images)
	body := fmt.Sprintf(`{"model": "m", "max_tokens": %d, "temperature": 0, "messages": [{"role": "user", "content": [`+
		`{"type": "image_url", "image_url": {"url": %q}}, {"type": "text", "text": "Can you describe this image?"}]}]}`,
		len(c.Tokens), "file://"+mustAbs(t, filepath.Join(images, "rgb_40x60.png")))
	code, res := postJSONKey(t, srv.url+"/v1/chat/completions", "k", body)
	if code != 200 {
		t.Fatalf("status %d: %v", code, res)
	}
	choices, _ := res["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("choices %v", res["choices"])
	}
	msg, _ := choices[0].(map[string]any)["message"].(map[string]any)
	if got := msg["content"]; got != want {
		t.Errorf("answered %q, the HF oracle %q", got, want)
	}
	usage, _ := res["usage"].(map[string]any)
	if n, _ := usage["prompt_tokens"].(float64); int(n) != len(c.InputIDs) {
		t.Errorf("usage counts %v prompt tokens, the HF processor's prompt has %d (image tokens included)", usage["prompt_tokens"], len(c.InputIDs))
	}
}

// visionCase is one case of a vision fixture's oracle.json: the HF
// processor's prompt ids and the oracle's greedy tokens.
type visionCase struct {
	Name     string  `json:"name"`
	InputIDs []int32 `json:"input_ids"`
	Tokens   []int32 `json:"tokens"`
}

// imageTextCase returns the first case of the vision fixture in dir,
// image_text: the image rgb_40x60.png, then "Can you describe this
// image?".
func imageTextCase(t *testing.T, dir string) visionCase {
	t.Helper()
	var oracle struct {
		Cases []visionCase `json:"cases"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &oracle); err != nil {
		t.Fatal(err)
	}
	if len(oracle.Cases) == 0 || oracle.Cases[0].Name != "image_text" {
		t.Fatalf("%s: the first case is not image_text", dir)
	}
	return oracle.Cases[0]
}

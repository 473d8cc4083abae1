// Package toolcall reads a chat model's output the way its chat template
// told it to write: the reasoning (Qwen3's <think>, gpt-oss's analysis
// channel, Command-R's <|START_THINKING|>), the answer, and function calls
// in the template's convention (Hermes/Qwen <tool_call>{json}</tool_call>,
// Qwen3-Coder's <function=…><parameter=…> XML, Llama 3.x JSON and
// <|python_tag|>, Mistral [TOOL_CALLS], gpt-oss harmony, Granite
// <|tool_call|>, Command-R <|START_ACTION|>, DeepSeek-V3, Gemma 4
// <|tool_call>call:…, Kimi K2 <|tool_calls_section_begin|>, GLM-4.5+
// <arg_key>/<arg_value>, Nemotron-H <TOOLCALL>, MiniCPM's and LFM2's
// Python calls, MiniMax-M2 <invoke>, Apertus <|tools_prefix|>, Solar Open
// <|tool_call:begin|>).
// The convention is chosen once from the template source (Detect); a
// template that renders no tools gets Generic, archc's own tool prompt in
// the system turn with Hermes-shaped calls (as llama.cpp's generic handler
// does).
//
// Split works on the whole text; a Stream splits text as it is generated,
// never sending text that might still turn out to be a marker or a call.
package toolcall

import (
	"strings"
	"unicode"
)

// Call is one parsed function call.
type Call struct {
	Name string
	// Arguments is the call's arguments as JSON object text (OpenAI's
	// function.arguments).
	Arguments string
}

// Output is a split model output.
type Output struct {
	Reasoning string // the reasoning, markers removed ("" when none)
	Content   string // the answer text outside reasoning and calls
	Calls     []Call
}

// Format is a tool-call convention (and the reasoning markers of the same
// template).
type Format struct {
	// Name identifies the convention ("hermes", "qwen3-coder", "llama3",
	// "mistral", "harmony", "granite", "command-r", "deepseek-v3",
	// "gemma4", "kimi-k2", "glm-4.5", "nemotron", "minicpm", "lfm2",
	// "minimax-m2", "apertus", "solar-open", "generic", "unrecognized").
	Name string
	// RendersTools is false for "generic": the template ignores `tools`,
	// so the server writes them into the system turn itself (ToolPrompt).
	// Every other convention, "unrecognized" included, gets the tools
	// through the template, as transformers' apply_chat_template passes
	// them.
	RendersTools bool
	// ThinkOpen and ThinkClose mark reasoning ("" when the template has
	// none).
	ThinkOpen, ThinkClose string
	// starts are the markers that begin the tool-call section.
	starts []string
	// leadingJSON: output that begins with "{" is a call section (Llama 3.x
	// writes bare JSON calls).
	leadingJSON bool
	// strip are markers removed from content (Command-R's response
	// markers).
	strip []string
	// parse reads the tool-call section (from its start marker to the end
	// of the text): the calls and any text after them. ok is false when
	// the section does not parse (then it is content).
	parse func(section string) (calls []Call, rest string, ok bool)
	// split replaces the marker-based split entirely (harmony).
	split func(text string, final bool) Output
	// grammar writes the convention's calls as a grammar (Grammar); nil
	// when they are not enforced.
	grammar grammar
}

// CallMarker is the marker that begins a call ("<tool_call>",
// "<seed:tool_call>", "[TOOL_CALLS]", ...), or "" for a convention without
// one (harmony).
func (f *Format) CallMarker() string {
	if len(f.starts) == 0 {
		return ""
	}
	return f.starts[0]
}

// Split splits a whole output. startInThink says the prompt already opened
// the reasoning (it ends with ThinkOpen, as DeepSeek-R1's and Qwen3
// thinking templates' generation prompts do).
func (f *Format) Split(text string, startInThink bool) Output {
	return f.splitAt(text, startInThink, true)
}

// InThinkAfter reports whether a rendered prompt leaves the reasoning open
// (it ends with ThinkOpen and optional whitespace).
func (f *Format) InThinkAfter(prompt string) bool {
	if f.ThinkOpen == "" {
		return false
	}
	p := strings.TrimRight(prompt, " \n")
	return strings.HasSuffix(p, f.ThinkOpen)
}

// splitAt splits text; with !final, it holds back whatever might still
// become a marker (a suffix that is a marker's prefix) and any unfinished
// call section, so that each non-final Output's Reasoning and Content are
// prefixes of the final ones.
func (f *Format) splitAt(text string, inThink, final bool) Output {
	if f.split != nil {
		return f.split(text, final)
	}
	var out Output
	rest := text
	if f.ThinkOpen != "" {
		if !inThink {
			t := strings.TrimLeft(rest, " \n")
			if strings.HasPrefix(t, f.ThinkOpen) {
				rest, inThink = t[len(f.ThinkOpen):], true
			} else if !final && strings.HasPrefix(f.ThinkOpen, t) {
				return out // may still open the reasoning
			}
		}
		if inThink {
			i := strings.Index(rest, f.ThinkClose)
			if i < 0 {
				if final {
					out.Reasoning = strings.TrimSpace(rest)
					return out
				}
				out.Reasoning = strings.TrimLeftFunc(holdBack(rest, []string{f.ThinkClose}), unicode.IsSpace) // as the final TrimSpace
				return out
			}
			out.Reasoning = strings.TrimSpace(rest[:i])
			rest = strings.TrimLeft(rest[i+len(f.ThinkClose):], " \n")
		}
	}
	content, section := rest, ""
	start := -1
	for _, m := range f.starts {
		if i := strings.Index(rest, m); i >= 0 && (start < 0 || i < start) {
			start = i
		}
	}
	if f.leadingJSON && strings.HasPrefix(strings.TrimLeft(rest, " \n"), "{") {
		start = len(rest) - len(strings.TrimLeft(rest, " \n"))
	}
	if start >= 0 {
		content, section = rest[:start], rest[start:]
	}
	if !final {
		// Trailing whitespace waits for what follows: before a call
		// section the final content drops it.
		if section != "" {
			out.Content = f.clean(strings.TrimRight(content, " \n"))
			return out
		}
		held := strings.TrimRight(holdBack(content, f.starts), " \n")
		if f.leadingJSON && strings.TrimSpace(held) == "" {
			held = "" // the output may still begin with a JSON call
		}
		out.Content = f.clean(holdBack(held, f.strip))
		return out
	}
	if section != "" {
		calls, after, ok := f.parse(section)
		if ok && len(calls) > 0 {
			out.Calls = calls
			content = strings.TrimRight(content, " \n")
			if a := strings.TrimSpace(after); a != "" {
				if content != "" {
					content += "\n"
				}
				content += a
			}
		} else {
			content = rest
		}
	}
	out.Content = f.clean(content)
	return out
}

func (f *Format) clean(s string) string {
	for _, m := range f.strip {
		s = strings.ReplaceAll(s, m, "")
	}
	return s
}

// holdBack returns s without its longest suffix that is a proper prefix of
// one of markers (text that may still become a marker).
func holdBack(s string, markers []string) string {
	cut := len(s)
	for _, m := range markers {
		for k := min(len(m)-1, len(s)); k > 0; k-- {
			if strings.HasSuffix(s, m[:k]) {
				cut = min(cut, len(s)-k)
				break
			}
		}
	}
	return s[:cut]
}

// Stream splits an output as it is generated.
type Stream struct {
	f       *Format
	inThink bool
	text    strings.Builder
	sentR   int
	sentC   int
	omitR   bool // OmitReasoning: the reasoning is split off and dropped
}

// NewStream returns a Stream; inThink as Split's startInThink.
func (f *Format) NewStream(inThink bool) *Stream { return &Stream{f: f, inThink: inThink} }

// OmitReasoning makes s drop the reasoning it splits off (Push and Finish
// return it as ""; the content and calls are unchanged), as vLLM's
// include_reasoning false does. It returns s.
func (s *Stream) OmitReasoning() *Stream {
	s.omitR = true
	return s
}

// Push adds generated text and returns the reasoning and content that are
// now certain (never a part of a marker or a call).
func (s *Stream) Push(piece string) (reasoning, content string) {
	s.text.WriteString(piece)
	return s.delta(s.f.splitAt(s.text.String(), s.inThink, false))
}

// Finish returns the rest of the reasoning and content and the calls.
func (s *Stream) Finish() (reasoning, content string, calls []Call) {
	o := s.f.splitAt(s.text.String(), s.inThink, true)
	r, c := s.delta(o)
	return r, c, o.Calls
}

func (s *Stream) delta(o Output) (string, string) {
	var r, c string
	if len(o.Reasoning) > s.sentR {
		r = o.Reasoning[s.sentR:]
		s.sentR = len(o.Reasoning)
	}
	if s.omitR {
		r = ""
	}
	if len(o.Content) > s.sentC {
		c = o.Content[s.sentC:]
		s.sentC = len(o.Content)
	}
	return r, c
}

// Unrecognized is the convention of a template that renders `tools` in a
// way Detect does not know (f is what Detect returned, for its reasoning
// markers): the template's own prompt is used as transformers renders it
// (RendersTools), and the output is never split into calls, so a call the
// model writes reaches the client as content. The server logs its name,
// "unrecognized".
func Unrecognized(f *Format) *Format {
	return &Format{Name: "unrecognized", RendersTools: true, ThinkOpen: f.ThinkOpen, ThinkClose: f.ThinkClose}
}

// WithoutCalls returns f that reads no tool calls (tool_choice "none", or
// a request without tools): only the reasoning is split off.
func (f *Format) WithoutCalls() *Format {
	g := *f
	g.starts, g.leadingJSON, g.parse = nil, false, nil
	return &g
}

// Splits reports whether f separates anything from the content.
func (f *Format) Splits() bool {
	return f.split != nil || f.ThinkOpen != "" || len(f.starts) > 0 || f.leadingJSON || len(f.strip) > 0
}

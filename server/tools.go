package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/chat"
	"github.com/archc/archc/server/toolcall"
)

// toolJSON is one entry of a request's tools: {"type": "function",
// "function": {"name", "description", "parameters": JSON Schema, "strict"}}.
// Raw keeps the entry as sent, for the chat template.
type toolJSON struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
	Raw json.RawMessage `json:"-"`
}

func (t *toolJSON) UnmarshalJSON(b []byte) error {
	type plain toolJSON
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = toolJSON(p)
	t.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// responseFormat is {"type": "text" | "json_object" | "json_schema",
// "json_schema": {"name", "schema", "strict"}}.
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

// chatPlan is what a chat request asks beyond sampling: the prompt, how to
// read the output, and the grammar that constrains it.
type chatPlan struct {
	ids     []int32
	format  *toolcall.Format
	inThink bool // the prompt opened the reasoning
	// parseTools: split tool calls out of the output (tools given and
	// tool_choice not "none").
	parseTools bool
	mistralIDs bool   // call ids of 9 letters and digits (Mistral's templates check)
	lark       string // "" when decoding is free
	// omitReasoning: include_reasoning false, the reasoning is split off
	// and not returned.
	omitReasoning bool
	// images are the request's images, in prompt order; with any, ids is
	// nil until the images are encoded (promptWithImages tokenizes prompt,
	// the rendered text, once their placeholders expand).
	images []imageRef
	prompt string
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// planChat validates the chat-specific fields of req and renders its
// prompt. Errors are 400s naming the field.
func planChat(text *rt.Text, req *chatRequest) (*chatPlan, error) {
	if text == nil || text.ChatTemplate == "" {
		return nil, badRequest("messages", "the model has no chat template; use /v1/completions")
	}
	if len(req.Messages) == 0 {
		return nil, badRequest("messages", "messages must not be empty")
	}
	// null, [] and "none" are the fields table's no-op values: accepted.
	functions := len(req.Functions) > 0 && !isNoop(req.Functions, []string{"[]"})
	if functions || len(req.FunctionCall) > 0 && !isNoop(req.FunctionCall, []string{`"none"`}) {
		field := "functions"
		if !functions {
			field = "function_call"
		}
		return nil, badRequest(field, "%s is OpenAI's deprecated form of tools; send tools and tool_choice instead", field)
	}
	p := &chatPlan{format: toolFormat(text.ChatTemplate)}
	p.mistralIDs = p.format.Name == "mistral"
	p.omitReasoning = req.IncludeReasoning != nil && !*req.IncludeReasoning
	// Tools.
	names := map[string]*toolJSON{}
	for i := range req.Tools {
		t := &req.Tools[i]
		if t.Type != "function" {
			return nil, badRequest(fmt.Sprintf("tools[%d].type", i), "tools[%d].type is %q; only \"function\" tools are supported", i, t.Type)
		}
		if !toolName.MatchString(t.Function.Name) {
			return nil, badRequest(fmt.Sprintf("tools[%d].function.name", i), "tools[%d].function.name %q must be 1 to 64 letters, digits, _, . or -", i, t.Function.Name)
		}
		if names[t.Function.Name] != nil {
			return nil, badRequest(fmt.Sprintf("tools[%d].function.name", i), "tools[%d]: a second function named %q", i, t.Function.Name)
		}
		if len(t.Function.Parameters) > 0 && string(t.Function.Parameters) != "null" {
			if err := checkSchema(t.Function.Parameters); err != nil {
				return nil, badRequest(fmt.Sprintf("tools[%d].function.parameters", i), "tools[%d].function.parameters is not a valid JSON Schema: %v", i, err)
			}
		}
		names[t.Function.Name] = t
	}
	choice, named, err := parseToolChoice(req.ToolChoice, names)
	if err != nil {
		return nil, err
	}
	if len(req.Tools) > 0 {
		p.parseTools = choice != "none"
	}
	parallel := req.ParallelToolCalls == nil || *req.ParallelToolCalls
	// Structured output.
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			p.lark = "start: %json " + withGuidance([]byte(`{"type": "object"}`))
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return nil, badRequest("response_format.json_schema", "response_format json_schema needs json_schema.schema")
			}
			if err := checkSchema(rf.JSONSchema.Schema); err != nil {
				return nil, badRequest("response_format.json_schema.schema", "response_format.json_schema.schema is not a valid JSON Schema: %v", err)
			}
			p.lark = "start: %json " + withGuidance(rf.JSONSchema.Schema)
		default:
			return nil, badRequest("response_format.type", "response_format.type %q is not supported: use text, json_object or json_schema", rf.Type)
		}
		if p.lark != "" && (choice == "required" || named != nil) {
			return nil, badRequest("response_format", "response_format and a required or named tool_choice cannot both constrain the output")
		}
	}
	if choice == "required" || named != nil {
		tools := req.Tools
		if named != nil {
			tools = []toolJSON{*named}
		}
		lark, err := toolGrammar(p.format, text, tools, parallel && named == nil)
		if err != nil {
			return nil, badRequest("tool_choice", "%v", err)
		}
		p.lark = lark
	}
	// Render.
	turns, images, err := chatTurns(req.Messages, p.format)
	if err != nil {
		return nil, err
	}
	p.images = images
	opts := chat.Options{AddGenerationPrompt: true, Vars: map[string]any{}}
	if b := text.Tokenizer.BOS(); b >= 0 {
		opts.BOS = text.Tokenizer.TokenText(b)
	}
	if eos := text.Tokenizer.EOS(); len(eos) > 0 {
		opts.EOS = text.Tokenizer.TokenText(eos[0])
	}
	if len(req.Tools) > 0 {
		if p.format.RendersTools {
			for _, t := range req.Tools {
				opts.Tools = append(opts.Tools, t.Raw)
			}
		} else {
			turns = withToolPrompt(turns, req.Tools)
		}
	}
	switch req.ReasoningEffort {
	case "":
	case "minimal", "low", "medium", "high":
		opts.Vars["reasoning_effort"] = req.ReasoningEffort
	default:
		return nil, badRequest("reasoning_effort", "reasoning_effort %q: use low, medium or high", req.ReasoningEffort)
	}
	for k, v := range req.ChatTemplateKwargs {
		switch k {
		case "messages", "tools", "add_generation_prompt", "bos_token", "eos_token":
			return nil, badRequest("chat_template_kwargs", "chat_template_kwargs cannot set %q", k)
		}
		opts.Vars[k] = v
	}
	prompt, err := chat.Render(text.ChatTemplate, turns, opts)
	if err != nil {
		return nil, badRequest("messages", "%v", err)
	}
	p.inThink = p.format.InThinkAfter(prompt)
	p.prompt = prompt
	if len(p.images) > 0 { // tokenized once the images are encoded (promptWithImages)
		return p, nil
	}
	if p.ids, err = text.Tokenizer.Encode(prompt, false); err != nil {
		return nil, badRequest("messages", "%v", err)
	}
	return p, nil
}

// promptWithImages encodes the plan's images through the model and
// tokenizes its prompt with each image's placeholder expanded (as the HF
// processor does): the prompt's ids and the images' rows for prefill.
// Errors are 400s naming the image's field, or the model's failure.
func (p *chatPlan) promptWithImages(ctx context.Context, s *Server, m *rt.Model, text *rt.Text) ([]int32, *rt.Encoded, error) {
	data, err := s.loadImages(ctx, m, p.images)
	if err != nil {
		return nil, nil, err
	}
	if ph := s.cfg.Images.Processor.Placeholder(); !strings.Contains(p.prompt, ph) {
		return nil, nil, badRequest(p.images[0].field, "%s: the model's chat template writes no image placeholder (%s) for image parts", p.images[0].field, ph)
	}
	im, err := s.encodeImages(ctx, m, p.images, data)
	if err != nil {
		return nil, nil, err
	}
	expanded, err := s.cfg.Images.Processor.Expand(p.prompt, im.Grids)
	if err != nil {
		return nil, nil, badRequest("messages", "%v (the chat template writes %s for each image part)", err, s.cfg.Images.Processor.Placeholder())
	}
	ids, err := text.Tokenizer.Encode(expanded, false)
	if err != nil {
		return nil, nil, badRequest("messages", "%v", err)
	}
	return ids, im.Encoded, nil
}

// parseToolChoice reads "auto" | "none" | "required" | {"type":
// "function", "function": {"name"}}; named is the named tool.
func parseToolChoice(raw json.RawMessage, tools map[string]*toolJSON) (choice string, named *toolJSON, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "auto", nil, nil
	}
	if json.Unmarshal(raw, &choice) == nil {
		switch choice {
		case "auto", "none":
			return choice, nil, nil
		case "required":
			if len(tools) == 0 {
				return "", nil, badRequest("tool_choice", "tool_choice \"required\" needs tools")
			}
			return choice, nil, nil
		}
		return "", nil, badRequest("tool_choice", "tool_choice %q: use auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}", choice)
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &obj) != nil || obj.Type != "function" {
		return "", nil, badRequest("tool_choice", "tool_choice must be auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}")
	}
	t := tools[obj.Function.Name]
	if t == nil {
		return "", nil, badRequest("tool_choice", "tool_choice names function %q, which is not among the request's tools", obj.Function.Name)
	}
	return "named", t, nil
}

// checkSchema compiles a JSON Schema (draft 2020-12 unless it says
// otherwise) and checks it is an object schema.
func checkSchema(raw json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if _, ok := doc.(map[string]any); !ok {
		return fmt.Errorf("a schema must be a JSON object")
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("urn:schema", doc); err != nil {
		return err
	}
	_, err = c.Compile("urn:schema")
	if err != nil {
		// A URN, not a file name: the library resolves a relative one
		// against the server's working directory and names it in errors.
		msg := strings.Replace(strings.Join(strings.Fields(err.Error()), " "), `"urn:schema#"`, "the schema", 1)
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// guidance is llguidance's JSON layout: no free whitespace (a small model
// would write it forever), and the separators of Python's json.dumps.
const guidance = `"x-guidance": {"whitespace_flexible": false, "item_separator": ", ", "key_separator": ": "}`

// withGuidance adds the x-guidance options to a JSON Schema object's text
// (keeping the schema's key order, which is the order properties come in).
func withGuidance(schema []byte) string {
	s := strings.TrimSpace(string(schema))
	if strings.Contains(s, `"x-guidance"`) || !strings.HasPrefix(s, "{") {
		return s
	}
	rest := strings.TrimSpace(s[1:])
	if rest == "}" {
		return "{" + guidance + "}"
	}
	return "{" + guidance + ", " + rest
}

// larkString quotes s as a Lark string literal.
func larkString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// marker is a tool-call marker in a grammar: the special token it is
// (<[id]>, which text cannot spell), or its text.
func marker(text *rt.Text, s string) string {
	if id, ok := text.Tokenizer.TokenID(s); ok && text.Tokenizer.IsSpecial(id) {
		return fmt.Sprintf("<[%d]>", id)
	}
	return larkString(s)
}

// callSchema is the JSON Schema of one call object {nameKey: NAME, argsKey:
// PARAMETERS} (with extra leading properties, such as Command-R's
// tool_call_id).
func callSchema(t toolJSON, nameKey, argsKey string, lead ...string) string {
	params := strings.TrimSpace(string(t.Function.Parameters))
	if params == "" || params == "null" {
		params = `{"type": "object"}`
	}
	var props, req []string
	for i := 0; i+1 < len(lead); i += 2 {
		props = append(props, larkString(lead[i])+": "+lead[i+1])
		req = append(req, larkString(lead[i]))
	}
	props = append(props, larkString(nameKey)+`: {"const": `+larkString(t.Function.Name)+`}`, larkString(argsKey)+": "+params)
	req = append(req, larkString(nameKey), larkString(argsKey))
	return `{"type": "object", "properties": {` + strings.Join(props, ", ") + `}, "required": [` + strings.Join(req, ", ") + `], "additionalProperties": false}`
}

// anyCall is a %json rule matching a call to any of tools.
func anyCall(tools []toolJSON, nameKey, argsKey string, lead ...string) string {
	var alts []string
	for _, t := range tools {
		alts = append(alts, callSchema(t, nameKey, argsKey, lead...))
	}
	return "%json {" + guidance + `, "anyOf": [` + strings.Join(alts, ", ") + "]}"
}

// toolGrammar is the Lark grammar of one call (or, with parallel, one or
// more) to tools in format's convention: what tool_choice "required" or a
// named function enforces.
func toolGrammar(f *toolcall.Format, text *rt.Text, tools []toolJSON, parallel bool) (string, error) {
	list := func(sep string) string {
		if parallel {
			return "call (" + larkString(sep) + " call)*"
		}
		return "call"
	}
	switch f.Name {
	case "hermes", "generic":
		return "start: " + list("\n") + "\ncall: " + marker(text, "<tool_call>") + ` "\n" obj "\n" ` + marker(text, "</tool_call>") + "\nobj: " + anyCall(tools, "name", "arguments") + "\n", nil
	case "llama3":
		return "start: " + list("; ") + "\ncall: " + anyCall(tools, "name", "parameters") + "\n", nil
	case "mistral":
		return "start: " + marker(text, "[TOOL_CALLS]") + ` "[" ` + list(", ") + ` "]"` + "\ncall: " + anyCall(tools, "name", "arguments") + "\n", nil
	case "granite":
		return "start: " + marker(text, "<|tool_call|>") + ` "[" ` + list(", ") + ` "]"` + "\ncall: " + anyCall(tools, "name", "arguments") + "\n", nil
	case "command-r":
		return "start: " + marker(text, "<|START_ACTION|>") + ` "[" ` + list(", ") + ` "]" ` + marker(text, "<|END_ACTION|>") +
			"\ncall: " + anyCall(tools, "tool_name", "parameters", "tool_call_id", `{"type": "string", "pattern": "^[0-9]{1,3}$"}`) + "\n", nil
	case "harmony":
		var alts []string
		for i := range tools {
			alts = append(alts, "c"+strconv.Itoa(i))
		}
		var b strings.Builder
		b.WriteString("start: " + strings.Join(alts, " | ") + "\n")
		for i, t := range tools {
			params := strings.TrimSpace(string(t.Function.Parameters))
			if params == "" || params == "null" {
				params = `{"type": "object"}`
			}
			fmt.Fprintf(&b, "c%d: %s %s %s \"json\" %s %%json %s\n", i, marker(text, "<|channel|>"), larkString("commentary to=functions."+t.Function.Name+" "),
				marker(text, "<|constrain|>"), marker(text, "<|message|>"), withGuidance([]byte(params)))
		}
		return b.String(), nil
	case "qwen3-coder":
		return xmlGrammar(f, text, tools, parallel)
	case "deepseek-v3":
		return deepseekGrammar(text, tools, parallel), nil
	}
	return "", fmt.Errorf("tool_choice required or a named function is not enforced for the %s tool-call convention; use auto", f.Name)
}

// xmlValue is the grammar of one parameter value in Qwen3-Coder's XML
// calls: a string as raw text (one of its enum values, or any text that
// does not close the parameter), anything else as JSON valid against the
// parameter's schema (the parser reads a value that parses as JSON as
// that value).
func xmlValue(rule string, schema json.RawMessage, end string) string {
	var s struct {
		Type any   `json:"type"`
		Enum []any `json:"enum"`
	}
	json.Unmarshal(schema, &s)
	var strs []string
	for _, e := range s.Enum {
		if v, ok := e.(string); ok && v != "" && !strings.Contains(v, "</parameter>") {
			strs = append(strs, larkString(v))
		}
	}
	switch {
	case len(strs) > 0 && len(strs) == len(s.Enum):
		return rule + ": (" + strings.Join(strs, " | ") + ") " + larkString(end) + "\n"
	case s.Type == "string" && len(s.Enum) == 0:
		// Any text up to the end of the parameter (a lazy lexeme that
		// stops at it), with a character that is not a space or part of a
		// number, so that it does not read back as one.
		return rule + "[stop=" + larkString(end) + "]: /(?s:.*[^\\s0-9.+\\-].*)/\n"
	}
	return rule + ": %json " + withGuidance(schema) + " " + larkString(end) + "\n"
}

// schemaProps lists an object schema's properties in their order, and its
// required ones.
func schemaProps(schema json.RawMessage) (names []string, props map[string]json.RawMessage, required map[string]bool) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	json.Unmarshal(schema, &s)
	required = map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	props = map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, props, required
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		name := tok.(string)
		names = append(names, name)
		props[name] = v
	}
	return names, props, required
}

// xmlGrammar is the grammar of Qwen3-Coder's (and Seed-OSS's) calls:
// <tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n…</function>\n</tool_call>,
// parameters in the schema's order, the required ones always, the others
// optionally (Seed-OSS: <seed:tool_call>, values without the newlines).
func xmlGrammar(f *toolcall.Format, text *rt.Text, tools []toolJSON, parallel bool) (string, error) {
	open, nl := f.CallMarker(), "\n"
	if open == "<seed:tool_call>" {
		nl = ""
	}
	closing := strings.Replace(open, "<", "</", 1)
	var b strings.Builder
	b.WriteString("start: call")
	if parallel {
		b.WriteString(` ("\n" call)*`)
	}
	fmt.Fprintf(&b, "\ncall: %s \"\\n\" fn \"\\n\" %s\nfn: ", marker(text, open), marker(text, closing))
	for i := range tools {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "f%d", i)
	}
	b.WriteString("\n")
	for i, t := range tools {
		names, props, required := schemaProps(t.Function.Parameters)
		fmt.Fprintf(&b, "f%d: %s", i, larkString("<function="+t.Function.Name+">\n"))
		for j, name := range names {
			if strings.ContainsAny(name, "<>\n") {
				return "", fmt.Errorf("tool %s: parameter name %q cannot be written in the XML call convention", t.Function.Name, name)
			}
			fmt.Fprintf(&b, " f%dp%d", i, j)
			if !required[name] {
				b.WriteString("?")
			}
		}
		b.WriteString(` "</function>"` + "\n")
		for j, name := range names {
			fmt.Fprintf(&b, "f%dp%d: %s f%dv%d %s\n", i, j, larkString("<parameter="+name+">"+nl), i, j, larkString("\n"))
			b.WriteString(xmlValue(fmt.Sprintf("f%dv%d", i, j), props[name], nl+"</parameter>"))
		}
	}
	return b.String(), nil
}

// deepseekGrammar is the grammar of DeepSeek-V3's calls,
// <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>
// (calls separated by newlines), or V3.1's
// <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>, whichever the
// template writes.
func deepseekGrammar(text *rt.Text, tools []toolJSON, parallel bool) string {
	v3 := strings.Contains(text.ChatTemplate, "```json")
	sep := ""
	if v3 {
		sep = `"\n" `
	}
	var b strings.Builder
	fmt.Fprintf(&b, "start: %s call", marker(text, "<｜tool▁calls▁begin｜>"))
	if parallel {
		fmt.Fprintf(&b, " (%scall)*", sep)
	}
	fmt.Fprintf(&b, " %s\ncall: ", marker(text, "<｜tool▁calls▁end｜>"))
	for i := range tools {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "c%d", i)
	}
	b.WriteString("\n")
	begin, tsep, end := marker(text, "<｜tool▁call▁begin｜>"), marker(text, "<｜tool▁sep｜>"), marker(text, "<｜tool▁call▁end｜>")
	for i, t := range tools {
		params := strings.TrimSpace(string(t.Function.Parameters))
		if params == "" || params == "null" {
			params = `{"type": "object"}`
		}
		if v3 {
			fmt.Fprintf(&b, "c%d: %s \"function\" %s %s %%json %s %s %s\n", i, begin, tsep, larkString(t.Function.Name+"\n```json\n"), withGuidance([]byte(params)), larkString("\n```"), end)
		} else {
			fmt.Fprintf(&b, "c%d: %s %s %s %%json %s %s\n", i, begin, larkString(t.Function.Name), tsep, withGuidance([]byte(params)), end)
		}
	}
	return b.String()
}

// chatTurns converts the request's messages for the template. With the
// generic convention (a template that renders no tools), tool calls and
// results become text in Hermes' shape: the assistant's <tool_call> blocks,
// and a user turn of <tool_response> blocks.
func chatTurns(msgs []message, f *toolcall.Format) ([]chat.Message, []imageRef, error) {
	var turns []chat.Message
	var images []imageRef
	for i, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant", "developer", "tool":
		default:
			return nil, nil, badRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q is not system, developer, user, assistant or tool", i, m.Role)
		}
		c, parts, refs, err := m.contentParts(i)
		if err != nil {
			return nil, nil, err
		}
		images = append(images, refs...)
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		t := chat.Message{Role: role, Content: c, ReasoningContent: m.ReasoningContent, Parts: parts}
		if len(m.ToolCalls) > 0 && role != "assistant" {
			return nil, nil, badRequest(fmt.Sprintf("messages[%d].tool_calls", i), "messages[%d]: only assistant turns have tool_calls", i)
		}
		for j, tc := range m.ToolCalls {
			if tc.Function.Name == "" {
				return nil, nil, badRequest(fmt.Sprintf("messages[%d].tool_calls[%d].function.name", i, j), "messages[%d].tool_calls[%d] has no function name", i, j)
			}
			args := tc.Function.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			if !json.Valid([]byte(args)) {
				return nil, nil, badRequest(fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments", i, j), "messages[%d].tool_calls[%d].function.arguments is not JSON", i, j)
			}
			t.ToolCalls = append(t.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
		if role == "tool" {
			if m.ToolCallID == "" {
				return nil, nil, badRequest(fmt.Sprintf("messages[%d].tool_call_id", i), "messages[%d]: a tool turn needs tool_call_id", i)
			}
			t.ToolCallID, t.Name = m.ToolCallID, m.Name
			if t.Name == "" {
				t.Name = callName(msgs[:i], m.ToolCallID)
			}
		}
		if !f.RendersTools {
			t = genericTurn(t)
			if t.Role == "user" && len(turns) > 0 && turns[len(turns)-1].Role == "user" && strings.HasPrefix(turns[len(turns)-1].Content, "<tool_response>") {
				turns[len(turns)-1].Content += "\n" + t.Content // parallel results: one turn
				continue
			}
		}
		turns = append(turns, t)
	}
	return turns, images, nil
}

// callName finds the function name of call id in earlier assistant turns.
func callName(msgs []message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, tc := range msgs[i].ToolCalls {
			if tc.ID == id {
				return tc.Function.Name
			}
		}
	}
	return ""
}

// genericTurn writes tool calls and results as text (the generic
// convention).
func genericTurn(t chat.Message) chat.Message {
	if len(t.ToolCalls) > 0 {
		var b strings.Builder
		b.WriteString(t.Content)
		for _, c := range t.ToolCalls {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %s, \"arguments\": %s}\n</tool_call>", larkString(c.Name), c.Arguments)
		}
		t.Content, t.ToolCalls = b.String(), nil
	}
	if t.Role == "tool" {
		t = chat.Message{Role: "user", Content: "<tool_response>\n" + t.Content + "\n</tool_response>"}
	}
	return t
}

// withToolPrompt adds archc's tool prompt (the generic convention) to the
// system turn, or as a new first turn.
func withToolPrompt(turns []chat.Message, tools []toolJSON) []chat.Message {
	var b strings.Builder
	b.WriteString("You can call functions. Their signatures, as JSON Schema, are within <tools></tools>:\n<tools>\n")
	for _, t := range tools {
		var c bytes.Buffer
		json.Compact(&c, t.Raw)
		b.Write(c.Bytes())
		b.WriteString("\n")
	}
	b.WriteString("</tools>\nTo call a function, answer with its name and arguments as JSON within <tool_call></tool_call>:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>")
	if len(turns) > 0 && turns[0].Role == "system" {
		out := append([]chat.Message(nil), turns...)
		out[0].Content = strings.TrimRight(out[0].Content, "\n") + "\n\n" + b.String()
		return out
	}
	return append([]chat.Message{{Role: "system", Content: b.String()}}, turns...)
}

// logitBias converts a request's logit_bias (token ids as strings) for the
// sampler. Errors: a key that is not a token id of the vocabulary, a bias
// outside [-100, 100].
func logitBias(m *rt.Model, bias map[string]float64) (map[int32]float64, error) {
	if len(bias) == 0 {
		return nil, nil
	}
	out := make(map[int32]float64, len(bias))
	for k, v := range bias {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 || id >= m.Vocab {
			return nil, badRequest("logit_bias", "logit_bias key %q is not a token id in [0, %d)", k, m.Vocab)
		}
		if !(v >= -100 && v <= 100) {
			return nil, badRequest("logit_bias", "logit_bias of token %s is %g: must be in [-100, 100]", k, v)
		}
		out[int32(id)] = v
	}
	return out, nil
}

// splitter returns the stream that separates reasoning and calls from the
// answer, or nil when the output is all content.
func (p *chatPlan) splitter() *toolcall.Stream {
	f := p.format
	if !p.parseTools {
		f = f.WithoutCalls()
	}
	if !f.Splits() {
		return nil
	}
	s := f.NewStream(p.inThink)
	if p.omitReasoning {
		s.OmitReasoning()
	}
	return s
}

// toolCalls writes calls in OpenAI's shape with fresh ids.
func (p *chatPlan) toolCalls(calls []toolcall.Call) []map[string]any {
	out := make([]map[string]any, len(calls))
	for i, c := range calls {
		id := newID("call_")
		if p.mistralIDs {
			id = newID("")[:9]
		}
		out[i] = map[string]any{"id": id, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
	}
	return out
}

// grammarError turns the worker's refusal of a grammar (one llguidance
// cannot build) into a 400 naming the field that asked for it.
func (p *chatPlan) grammarError(err error) error {
	if p.lark == "" || !strings.Contains(err.Error(), "grammar:") {
		return err
	}
	msg := err.Error()
	if i := strings.Index(msg, "grammar:"); i >= 0 {
		msg = msg[i:]
	}
	field := "response_format"
	if !strings.HasPrefix(p.lark, "start: %json") {
		field = "tool_choice"
	}
	return badRequest(field, "the %s cannot be enforced: %s", field, msg)
}

// toolFormat is the tool-call convention of a chat template: the one
// toolcall.Detect knows by its markers; for a template Detect does not
// know that renders `tools` all the same (chat.RendersTools),
// toolcall.Unrecognized, so that the template's own tool prompt is
// rendered exactly as transformers renders it and archc's generic prompt
// never replaces it.
func toolFormat(template string) *toolcall.Format {
	f := toolcall.Detect(template)
	if f.Name == "generic" && chat.RendersTools(template) {
		return toolcall.Unrecognized(f)
	}
	return f
}

// ChatConventions describes how the server reads a model's chat output,
// from its template: the tool-call convention and the reasoning markers
// (for the log line at load). "" when the model has no chat template.
func ChatConventions(text *rt.Text) string {
	if text == nil || text.ChatTemplate == "" {
		return ""
	}
	f := toolFormat(text.ChatTemplate)
	s := "tool calls: " + f.Name
	switch {
	case !f.RendersTools:
		s += " (the template renders no tools: archc's tool prompt, Hermes-shaped calls)"
	case f.Name == "unrecognized":
		s += " (the template renders tools in a convention archc does not parse: its prompt is used, and the calls the model writes are returned as content)"
	}
	switch {
	case f.Name == "harmony":
		s += "; reasoning: the analysis channel"
	case f.ThinkOpen != "":
		s += "; reasoning: " + f.ThinkOpen + "…" + f.ThinkClose
	}
	return s
}

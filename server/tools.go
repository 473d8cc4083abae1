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
	names  *fieldNames // the caller's field names, for errors
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// chatInput is a chat request as the planner reads it, whichever API it
// came by: the conversation (turns, or chat completions' messages, which
// the planner checks where it always has), the tools and how they may be
// called, the output format, the template's variables, and the names the
// caller's API gives these fields (for errors).
type chatInput struct {
	messages []message     // chat completions' messages (turns is then nil)
	turns    []chatMessage // a translated conversation, already checked
	tools    []toolJSON
	choice   toolChoice
	// choiceJSON is chat completions' tool_choice, read by the planner
	// in place of choice.
	choiceJSON json.RawMessage
	parallel   *bool
	format     *responseFormat
	effort     string
	kwargs     map[string]json.RawMessage
	// includeReasoning false drops the reasoning (vLLM's
	// include_reasoning).
	includeReasoning *bool
	// The deprecated functions / function_call are refused (chat
	// completions only).
	functions, functionCall json.RawMessage
	// Chat completions' predicted output and logprobs.
	prediction  *prediction
	logprobs    bool
	topLogprobs *int
	names       *fieldNames
}

// fieldNames are the caller's names for the fields a chat plan checks.
type fieldNames struct {
	messages   string // the conversation
	tool       string // one tool's entry, with %d for its index
	toolParams string // a tool's parameter schema, within its entry
	format     string // the output format
	formatJSON string // the format's json_schema object
	schema     string // the format's schema
	effort     string // the reasoning effort
	maxTokens  string
	stop       string
}

// chatNames are chat completions' own names.
var chatNames = &fieldNames{messages: "messages", tool: "tools[%d].function", toolParams: "parameters", format: "response_format",
	formatJSON: "response_format.json_schema", schema: "response_format.json_schema.schema", effort: "reasoning_effort", maxTokens: "max_tokens", stop: "stop"}

// toolField names field of tool i (name, parameters).
func (n *fieldNames) toolField(i int, field string) string {
	return fmt.Sprintf(n.tool, i) + "." + field
}

// planChat validates the chat-specific fields of req and renders its
// prompt. Errors are 400s naming the field.
func planChat(text *rt.Text, req *chatRequest) (*chatPlan, error) {
	return plan(text, req.input())
}

// input is the request as the planner reads it.
func (req *chatRequest) input() *chatInput {
	return &chatInput{messages: req.Messages, tools: req.Tools, choiceJSON: req.ToolChoice, parallel: req.ParallelToolCalls, format: req.ResponseFormat,
		effort: req.ReasoningEffort, kwargs: req.ChatTemplateKwargs, includeReasoning: req.IncludeReasoning,
		functions: req.Functions, functionCall: req.FunctionCall, prediction: req.Prediction, logprobs: req.Logprobs, topLogprobs: req.TopLogprobs,
		names: chatNames}
}

// plan validates a chat input and renders its prompt. Errors are 400s
// naming the caller's field.
func plan(text *rt.Text, in *chatInput) (*chatPlan, error) {
	names := in.names
	if text == nil || text.ChatTemplate == "" {
		return nil, badRequest(names.messages, "the model has no chat template; use /v1/completions")
	}
	if len(in.messages) == 0 && len(in.turns) == 0 {
		return nil, badRequest(names.messages, "%s must not be empty", names.messages)
	}
	// null, [] and "none" are the fields table's no-op values: accepted.
	functions := len(in.functions) > 0 && !isNoop(in.functions, []string{"[]"})
	if functions || len(in.functionCall) > 0 && !isNoop(in.functionCall, []string{`"none"`}) {
		field := "functions"
		if !functions {
			field = "function_call"
		}
		return nil, badRequest(field, "%s is OpenAI's deprecated form of tools; send tools and tool_choice instead", field)
	}
	p := &chatPlan{format: toolFormat(text.ChatTemplate)}
	p.mistralIDs = p.format.Name == "mistral"
	p.omitReasoning = in.includeReasoning != nil && !*in.includeReasoning
	// Tools.
	tools := in.tools
	byName := map[string]*toolJSON{}
	for i := range tools {
		t := &tools[i]
		if t.Type != "function" {
			return nil, badRequest(fmt.Sprintf("tools[%d].type", i), "tools[%d].type is %q; only \"function\" tools are supported", i, t.Type)
		}
		if !toolName.MatchString(t.Function.Name) {
			f := names.toolField(i, "name")
			return nil, badRequest(f, "%s %q must be 1 to 64 letters, digits, _, . or -", f, t.Function.Name)
		}
		if byName[t.Function.Name] != nil {
			return nil, badRequest(names.toolField(i, "name"), "tools[%d]: a second function named %q", i, t.Function.Name)
		}
		if len(t.Function.Parameters) > 0 && string(t.Function.Parameters) != "null" {
			if err := checkSchema(t.Function.Parameters); err != nil {
				f := names.toolField(i, names.toolParams)
				return nil, badRequest(f, "%s is not a valid JSON Schema: %v", f, err)
			}
		}
		byName[t.Function.Name] = t
	}
	choice := in.choice
	if in.choiceJSON != nil {
		var err error
		if choice, err = chatToolChoice(in.choiceJSON); err != nil {
			return nil, err
		}
	}
	named, err := choice.resolve(byName)
	if err != nil {
		return nil, err
	}
	if len(tools) > 0 {
		p.parseTools = choice.mode != "none"
	}
	parallel := in.parallel == nil || *in.parallel
	// Structured output.
	if rf := in.format; rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			p.lark = "start: %json " + withGuidance([]byte(`{"type": "object"}`))
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return nil, badRequest(names.formatJSON, "%s json_schema needs json_schema.schema", names.format)
			}
			if err := checkSchema(rf.JSONSchema.Schema); err != nil {
				return nil, badRequest(names.schema, "%s is not a valid JSON Schema: %v", names.schema, err)
			}
			p.lark = "start: %json " + withGuidance(rf.JSONSchema.Schema)
		default:
			return nil, badRequest(names.format+".type", "%s.type %q is not supported: use text, json_object or json_schema", names.format, rf.Type)
		}
		if p.lark != "" && (choice.mode == "required" || named != nil) {
			return nil, badRequest(names.format, "%s and a required or named tool_choice cannot both constrain the output", names.format)
		}
	}
	if choice.mode == "required" || named != nil {
		forced := tools
		if named != nil {
			forced = []toolJSON{*named}
		}
		lark, err := p.format.Grammar(grammarMarker(text), grammarTools(forced), parallel && named == nil)
		if err != nil {
			return nil, badRequest("tool_choice", "%v", err)
		}
		p.lark = lark
	}
	// Render.
	turns := in.turns
	if in.messages != nil {
		if turns, err = messageTurns(in.messages); err != nil {
			return nil, err
		}
	}
	rendered, images := renderTurns(turns, p.format)
	p.images = images
	opts := chat.Options{AddGenerationPrompt: true, Vars: map[string]any{}}
	if b := text.Tokenizer.BOS(); b >= 0 {
		opts.BOS = text.Tokenizer.TokenText(b)
	}
	if eos := text.Tokenizer.EOS(); eos >= 0 {
		opts.EOS = text.Tokenizer.TokenText(eos)
	}
	if len(tools) > 0 {
		if p.format.RendersTools {
			for _, t := range tools {
				opts.Tools = append(opts.Tools, t.Raw)
			}
		} else {
			rendered = withToolPrompt(rendered, tools)
		}
	}
	switch in.effort {
	case "":
	case "minimal", "low", "medium", "high":
		opts.Vars["reasoning_effort"] = in.effort
	default:
		return nil, badRequest(names.effort, "%s %q: use minimal, low, medium or high (the chat template's reasoning_effort)", names.effort, in.effort)
	}
	for k, v := range in.kwargs {
		switch k {
		case "messages", "tools", "add_generation_prompt", "bos_token", "eos_token":
			return nil, badRequest("chat_template_kwargs", "chat_template_kwargs cannot set %q", k)
		}
		opts.Vars[k] = v
	}
	prompt, err := chat.Render(text.ChatTemplate, text.Messages(rendered), opts)
	if err != nil {
		return nil, badRequest(names.messages, "%v", err)
	}
	p.inThink = p.format.InThinkAfter(prompt)
	p.prompt, p.names = prompt, names
	if len(p.images) > 0 { // tokenized once the images are encoded (promptWithImages)
		return p, nil
	}
	if p.ids, err = text.Tokenizer.Encode(prompt, false); err != nil {
		return nil, badRequest(names.messages, "%v", err)
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
		return nil, nil, badRequest(p.names.messages, "%v (the chat template writes %s for each image part)", err, s.cfg.Images.Processor.Placeholder())
	}
	ids, err := text.Tokenizer.Encode(expanded, false)
	if err != nil {
		return nil, nil, badRequest(p.names.messages, "%v", err)
	}
	if err := m.ImagePositions(ids, im.Encoded, im.Grids, s.cfg.Images.Processor, text); err != nil {
		return nil, nil, badRequest(p.names.messages, "%v", err)
	}
	return ids, im.Encoded, nil
}

// toolChoice is how a request lets the model call its tools: mode
// "auto" ("" too), "none", "required", or "named" (name: the function).
// spelled is the choice as the caller's API writes it, for errors
// ("{\"type\": \"any\"}" on /v1/messages); "" is chat's "required".
type toolChoice struct{ mode, name, spelled string }

// chooseMode is tool_choice's string form: "auto", "none" or "required".
func chooseMode(s string) (toolChoice, error) {
	switch s {
	case "auto", "none", "required":
		return toolChoice{mode: s}, nil
	}
	return toolChoice{}, badRequest("tool_choice", "tool_choice %q: use auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}", s)
}

// chatToolChoice reads chat completions' tool_choice: "auto" | "none" |
// "required" | {"type": "function", "function": {"name"}}.
func chatToolChoice(raw json.RawMessage) (toolChoice, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return toolChoice{mode: "auto"}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return chooseMode(s)
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &obj) != nil || obj.Type != "function" {
		return toolChoice{}, badRequest("tool_choice", "tool_choice must be auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}")
	}
	return toolChoice{mode: "named", name: obj.Function.Name}, nil
}

// resolve checks the choice against the request's tools: "required"
// needs some, a named function must be one of them (named).
func (c toolChoice) resolve(tools map[string]*toolJSON) (named *toolJSON, err error) {
	switch c.mode {
	case "required":
		if len(tools) == 0 {
			spelled := c.spelled
			if spelled == "" {
				spelled = `"required"`
			}
			return nil, badRequest("tool_choice", "tool_choice %s needs tools: give tools, or leave tool_choice out", spelled)
		}
	case "named":
		if named = tools[c.name]; named == nil {
			return nil, badRequest("tool_choice", "tool_choice names function %q, which is not among the request's tools", c.name)
		}
	}
	return named, nil
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

// withGuidance adds llguidance's JSON layout options to a JSON Schema
// object's text (toolcall.WithGuidance).
func withGuidance(schema []byte) string { return toolcall.WithGuidance(schema) }

// larkString quotes s as a Lark string literal.
func larkString(s string) string { return toolcall.LarkString(s) }

// grammarMarker writes a marker of text's template in a grammar: the
// special token it is (<[id]>, which text cannot spell), or its text.
func grammarMarker(text *rt.Text) toolcall.Marker {
	return func(s string) string {
		if id, ok := text.Tokenizer.TokenID(s); ok && text.Tokenizer.IsSpecial(id) {
			return fmt.Sprintf("<[%d]>", id)
		}
		return larkString(s)
	}
}

// grammarTools are tools as a grammar reads them.
func grammarTools(tools []toolJSON) []toolcall.Tool {
	out := make([]toolcall.Tool, len(tools))
	for i, t := range tools {
		out[i] = toolcall.Tool{Name: t.Function.Name, Parameters: t.Function.Parameters}
	}
	return out
}

// messageTurns checks chat completions' messages and reads them as
// turns: roles, content (text and image parts), an assistant's tool calls
// and a tool turn's call id. Errors are 400s naming the field.
func messageTurns(msgs []message) ([]chatMessage, error) {
	turns := make([]chatMessage, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant", "developer", "tool":
		default:
			return nil, badRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q is not system, developer, user, assistant or tool", i, m.Role)
		}
		c, parts, err := m.contentParts(i)
		if err != nil {
			return nil, err
		}
		t := chatMessage{Role: m.Role, Content: c, Parts: parts, ReasoningContent: m.ReasoningContent, ToolCallID: m.ToolCallID, Name: m.Name}
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return nil, badRequest(fmt.Sprintf("messages[%d].tool_calls", i), "messages[%d]: only assistant turns have tool_calls", i)
		}
		for j, tc := range m.ToolCalls {
			if tc.Function.Name == "" {
				return nil, badRequest(fmt.Sprintf("messages[%d].tool_calls[%d].function.name", i, j), "messages[%d].tool_calls[%d] has no function name", i, j)
			}
			args := tc.Function.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			if !json.Valid([]byte(args)) {
				return nil, badRequest(fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments", i, j), "messages[%d].tool_calls[%d].function.arguments is not JSON", i, j)
			}
			t.ToolCalls = append(t.ToolCalls, call(tc.ID, tc.Function.Name, args))
		}
		if m.Role == "tool" && m.ToolCallID == "" {
			return nil, badRequest(fmt.Sprintf("messages[%d].tool_call_id", i), "messages[%d]: a tool turn needs tool_call_id", i)
		}
		turns[i] = t
	}
	return turns, nil
}

// renderTurns writes checked turns for the template, with the request's
// images in prompt order. A developer turn is a system turn; a tool
// turn without a name gets its call's. With the generic convention (a
// template that renders no tools), tool calls and results become text in
// Hermes' shape: the assistant's <tool_call> blocks, and a user turn of
// <tool_response> blocks.
func renderTurns(msgs []chatMessage, f *toolcall.Format) ([]chat.Message, []imageRef) {
	var turns []chat.Message
	var images []imageRef
	for i, m := range msgs {
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		t := chat.Message{Role: role, Content: m.Content, ReasoningContent: m.ReasoningContent}
		for _, p := range m.Parts {
			if p.Image != nil {
				t.Parts = append(t.Parts, chat.Part{Type: chat.PartImage})
				images = append(images, *p.Image)
			} else {
				t.Parts = append(t.Parts, chat.Part{Type: chat.PartText, Text: p.Text})
			}
		}
		for _, tc := range m.ToolCalls {
			t.ToolCalls = append(t.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		if role == "tool" {
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
	return turns, images
}

// callName finds the function name of call id in earlier assistant turns.
func callName(msgs []chatMessage, id string) string {
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
	if p == nil {
		return nil
	}
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

// toolCalls are calls in OpenAI's shape with fresh ids.
func (p *chatPlan) toolCalls(calls []toolcall.Call) []toolCallJSON {
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		id := newID("call_")
		if p.mistralIDs {
			id = newID("")[:9]
		}
		out[i] = call(id, c.Name, c.Arguments)
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
	field := chatNames.format
	if p.names != nil {
		field = p.names.format
	}
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

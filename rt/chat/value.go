package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ardanlabs/jinja"
)

// JSONValue decodes JSON text into a template value, keeping the key order
// of objects (jinja.FromGoValue sorts map keys; Python dicts keep the
// order they were parsed in, which `tojson` then writes). Integers stay
// integers. Errors: text that is not one JSON value.
func JSONValue(raw []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jinja.Undefined(), fmt.Errorf("invalid JSON: more than one value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Undefined(), fmt.Errorf("invalid JSON: %v", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := jinja.NewDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return jinja.Undefined(), fmt.Errorf("invalid JSON: %v", err)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return jinja.Undefined(), err
				}
				d.AsDict().Set(k.(string), v)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), fmt.Errorf("invalid JSON: %v", err)
			}
			return d, nil
		case '[':
			var items []jinja.Value
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return jinja.Undefined(), err
				}
				items = append(items, v)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), fmt.Errorf("invalid JSON: %v", err)
			}
			return jinja.NewList(items), nil
		}
		return jinja.Undefined(), fmt.Errorf("invalid JSON: unexpected %v", t)
	default:
		return jinja.FromGoValue(t), nil
	}
}

// messageValue is the dict a template sees for m.
func messageValue(m Message) (jinja.Value, error) {
	v := jinja.NewDict()
	d := v.AsDict()
	d.Set("role", jinja.NewString(m.Role))
	d.Set("content", jinja.NewString(m.Content))
	if m.Parts != nil {
		parts := make([]jinja.Value, len(m.Parts))
		for i, p := range m.Parts {
			pv := jinja.NewDict()
			pv.AsDict().Set("type", jinja.NewString(p.Type))
			switch p.Type {
			case PartText:
				pv.AsDict().Set("text", jinja.NewString(p.Text))
			case PartImage:
			default:
				return jinja.Undefined(), fmt.Errorf("content part %d: unknown type %q (text or image)", i, p.Type)
			}
			parts[i] = pv
		}
		d.Set("content", jinja.NewList(parts))
	}
	if m.ReasoningContent != "" {
		d.Set("reasoning_content", jinja.NewString(m.ReasoningContent))
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]jinja.Value, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			args := jinja.NewString(c.Arguments)
			if a, err := JSONValue([]byte(c.Arguments)); err == nil && a.IsDict() {
				args = a
			}
			fn := jinja.NewDict()
			fn.AsDict().Set("name", jinja.NewString(c.Name))
			fn.AsDict().Set("arguments", args)
			call := jinja.NewDict()
			call.AsDict().Set("id", jinja.NewString(c.ID))
			call.AsDict().Set("type", jinja.NewString("function"))
			call.AsDict().Set("function", fn)
			calls[i] = call
		}
		d.Set("tool_calls", jinja.NewList(calls))
	}
	if m.ToolCallID != "" {
		d.Set("tool_call_id", jinja.NewString(m.ToolCallID))
	}
	if m.Name != "" {
		d.Set("name", jinja.NewString(m.Name))
	}
	return v, nil
}

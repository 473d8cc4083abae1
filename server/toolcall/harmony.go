package toolcall

import (
	"encoding/json"
	"strings"
)

// splitHarmony splits gpt-oss output in OpenAI's harmony format. The
// generation prompt ends with "<|start|>assistant"; each message then is
// "<|channel|>CHANNEL[ to=RECIPIENT][ <|constrain|>json]<|message|>TEXT"
// ended by <|end|>, <|call|> or <|return|> (the last two are end tokens,
// so the text may simply stop), and the next one starts again with
// "<|start|>assistant". The analysis channel is reasoning, final is
// content, and a message to=functions.NAME (on the commentary channel) is a
// call whose TEXT is the JSON arguments.
func splitHarmony(text string, final bool) Output {
	var out Output
	var reason, content []string
	rest := text
	for rest != "" {
		rest = strings.TrimPrefix(rest, "<|start|>assistant")
		if !strings.HasPrefix(rest, "<|channel|>") {
			if !final && strings.HasPrefix("<|channel|>", rest) || strings.HasPrefix("<|start|>assistant", rest) && !final {
				break
			}
			// Text without a header: content (a model that skipped the
			// channel).
			if !final {
				content = append(content, holdBack(rest, []string{"<|end|>", "<|start|>", "<|channel|>"}))
			} else {
				content = append(content, cutEnd(rest))
			}
			break
		}
		rest = rest[len("<|channel|>"):]
		h := strings.Index(rest, "<|message|>")
		if h < 0 {
			break // an unfinished header
		}
		header := rest[:h]
		body := rest[h+len("<|message|>"):]
		e, endLen := len(body), 0
		for _, m := range []string{"<|end|>", "<|call|>", "<|return|>", "<|start|>"} {
			if i := strings.Index(body, m); i >= 0 && i < e {
				e, endLen = i, len(m)
				if m == "<|start|>" {
					endLen = 0
				}
			}
		}
		closed := e < len(body)
		msg := body[:e]
		rest = body[e+endLen:]
		channel, recipient := header, ""
		if i := strings.Index(header, " to="); i >= 0 {
			channel, recipient = header[:i], header[i+len(" to="):]
		} else if i := strings.Index(header, "to="); i >= 0 {
			channel, recipient = header[:i], header[i+len("to="):]
		}
		channel = strings.TrimSpace(channel)
		if j := strings.IndexAny(recipient, " <"); j >= 0 {
			recipient = recipient[:j]
		}
		if !closed && !final {
			msg = holdBack(msg, []string{"<|end|>", "<|call|>", "<|return|>", "<|start|>"})
		}
		switch {
		case strings.HasPrefix(recipient, "functions."):
			if !closed && !final {
				continue
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(msg), &obj) == nil && len(recipient) > len("functions.") {
				out.Calls = append(out.Calls, Call{Name: recipient[len("functions."):], Arguments: compact([]byte(msg))})
			} else {
				content = append(content, msg)
			}
		case channel == "analysis":
			reason = append(reason, msg)
		default:
			content = append(content, msg)
		}
	}
	out.Reasoning = strings.Join(reason, "\n")
	out.Content = strings.Join(content, "")
	return out
}

func cutEnd(s string) string {
	for _, m := range []string{"<|end|>", "<|return|>", "<|call|>"} {
		s = strings.TrimSuffix(s, m)
	}
	return s
}

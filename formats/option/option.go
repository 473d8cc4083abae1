// Package option is the error a library returns for a bad value of one of
// its own parameters, named as the library names it (GenerateOptions'
// MaxTokens, the model's MaxLen), so that each front end can say it in its
// own terms: infer names its flags (--max-tokens), the server its request
// fields. A library error never names a command-line flag itself.
package option

import (
	"errors"
	"fmt"
	"regexp"
)

// Error is a bad value of the parameter Name (the library's Go name:
// "MaxTokens", "MaxLen", "System", "Chat"): Value is what was given (nil
// when no one value is at fault), Reason what is wrong with it and what to
// do. Reason names other parameters as {Name} ("lower {MaxTokens}"), which
// Error writes as Name and Rename as the front end's name.
type Error struct {
	Name   string
	Value  any
	Reason string
}

// Errorf returns an *Error for parameter name with value, its reason
// formatted as fmt.Sprintf(format, args...).
func Errorf(name string, value any, format string, args ...any) error {
	return &Error{Name: name, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// Error is "Name Value: Reason" ("Name: Reason" without a value), each
// {Other} of Reason written as Other.
func (e *Error) Error() string {
	reason := refs.ReplaceAllString(e.Reason, "$1")
	if e.Value == nil {
		return e.Name + ": " + reason
	}
	return fmt.Sprintf("%s %v: %s", e.Name, e.Value, reason)
}

// refs matches a parameter reference {Name} in a Reason.
var refs = regexp.MustCompile(`\{([A-Za-z][A-Za-z0-9]*)\}`)

// Rename rewrites err when it is (or wraps) an *Error whose Name is a key
// of names: the result reads as "NAME Value: Reason" with the front end's
// name for the parameter (a flag such as --max-len). Any other error is
// returned as it is.
func Rename(err error, names map[string]string) error {
	var oe *Error
	if !errors.As(err, &oe) {
		return err
	}
	name, ok := names[oe.Name]
	if !ok {
		return err
	}
	reason := refs.ReplaceAllStringFunc(oe.Reason, func(ref string) string {
		if n, ok := names[ref[1:len(ref)-1]]; ok {
			return n
		}
		return ref
	})
	return &Error{Name: name, Value: oe.Value, Reason: reason}
}

// Count is n with its noun, singular for one ("1 token", "2 tokens"), for
// the counts error messages give.
func Count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

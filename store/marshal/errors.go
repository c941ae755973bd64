package marshal

import (
	"errors"
	"fmt"
)

// ErrCorruptKey is wrapped by every DecodeKey error: the bytes given are not
// an encoding produced by AppendKey for that type.
var ErrCorruptKey = errors.New("marshal: corrupt key")

// invalidf builds the *ValidationError returned by Validate.
func invalidf(format string, args ...any) error {
	return &ValidationError{Msg: fmt.Sprintf(format, args...)}
}

// invalid builds a *ValidationError with a fixed text.
func invalid(msg string) error {
	return &ValidationError{Msg: msg}
}

// corruptKey builds a DecodeKey error naming the type being decoded.
func corruptKey(t Type, why string) error {
	return fmt.Errorf("%w: %s: %s", ErrCorruptKey, t.Name(), why)
}

// ParseError is returned by Parse. Its text is the one Cassandra gives for
// the same type string; Err, when set, is the error found inside the
// parameters of a parameterised type, which Cassandra reports only as an
// invalid definition of the outer type.
type ParseError struct {
	Msg string
	Err error
}

func (e *ParseError) Error() string { return e.Msg }

// Unwrap returns the error found inside the parameters, if any.
func (e *ParseError) Unwrap() error { return e.Err }

// FormatError is returned by FromString when the text is not a value of the
// type; its text follows Cassandra's fromString messages.
type FormatError struct {
	Msg string
	Err error
}

func (e *FormatError) Error() string { return e.Msg }

// Unwrap returns the underlying cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

func formatErrorf(cause error, format string, args ...any) error {
	return &FormatError{Msg: fmt.Sprintf(format, args...), Err: cause}
}

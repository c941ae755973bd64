package partition

import (
	"errors"
	"fmt"
)

// ErrInvalidToken is wrapped by every error ParseToken returns.
var ErrInvalidToken = errors.New("invalid token")

// maxQuotedInput is how much of a rejected input an error message quotes.
const maxQuotedInput = 80

// invalidTokenError reports that input is not a token of partitioner
// (its short class name); want says what was expected.
func invalidTokenError(partitioner, input, want string) error {
	if len(input) > maxQuotedInput {
		input = input[:maxQuotedInput] + "..."
	}
	return fmt.Errorf("%w for %s: %q: %s", ErrInvalidToken, partitioner, input, want)
}

// malformedToken is what FormatToken returns for bytes that are not a
// token of the partitioner (a Token from another partitioner, say). It is
// never a valid token string, so ParseToken refuses it.
func malformedToken(partitioner string, t Token) string {
	return fmt.Sprintf("<malformed %s token %x>", partitioner, []byte(t))
}

// appendFixedWidthBound implements AppendTokenBound for partitioners whose
// row prefix starts with the token in fixed width: the inclusive bound is
// the token itself, the exclusive one its successor. The last token of the
// width has no successor; its exclusive bound is the token followed by
// 0xFF 0xFF, which sorts after every escaped key written after it.
func appendFixedWidthBound(dst []byte, t Token, inclusive bool) []byte {
	if len(t) == 0 {
		return dst
	}
	start := len(dst)
	dst = append(dst, t...)
	if inclusive {
		return dst
	}
	for i := len(dst) - 1; i >= start; i-- {
		dst[i]++
		if dst[i] != 0 {
			return dst
		}
	}
	dst = append(dst[:start], t...)
	return appendAfterAll(dst)
}

// appendEscapedBound implements AppendTokenBound for partitioners whose
// row prefix starts with the escaped token: the inclusive bound is the
// escaped token with its end codeword (every row of t extends it); the
// exclusive one ends in 0x00 0x02 instead of 0x00 0x01, which sorts after
// every row of t and before every row of a token that extends t.
//
// Note that "escaped token + 0xFF" would not do: a token that extends t
// with a 0x00 byte (any ASCII character in UTF-16BE) continues with the
// codeword 0x00 0xFF, which sorts below 0xFF.
func appendEscapedBound(dst []byte, t Token, inclusive bool) []byte {
	if len(t) == 0 {
		return dst
	}
	dst = appendEscaped(dst, t)
	if !inclusive {
		dst[len(dst)-1] = terminatorEnd + 1
	}
	return dst
}

// rowKeyError wraps a DecodeRowKey failure with the partitioner's name.
func rowKeyError(partitioner string, err error) error {
	return fmt.Errorf("decode %s row key: %w", partitioner, err)
}

// errShortToken reports a row prefix too short for its fixed-width token.
func errShortToken(have, want int) error {
	return fmt.Errorf("%d bytes, want a %d-byte token first: %w", have, want, ErrMalformedRowKey)
}

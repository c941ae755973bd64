package marshal

import (
	"fmt"
	"strings"
	"testing"
)

// requestName decodes a name of the request summary, where "N bytes"
// stands for N zero bytes.
func requestName(t *testing.T, s string) []byte {
	var n int
	if _, err := fmt.Sscanf(s, "%d bytes", &n); err == nil {
		return make([]byte, n)
	}
	return unhex(t, s)
}

// TestValidationVectors replays every invalid_name case of
// validation_errors.json whose outcome is the comparator's business: an
// accepted name validates, a refused one fails with Cassandra's exact text.
// Empty and over-long names are checked by the Thrift layer; the one case
// where Cassandra validates a name and then crashes on it (a composite
// name with the static marker) must be refused with our own message.
func TestValidationVectors(t *testing.T) {
	var v validationVectors
	loadVectors(t, "validation_errors.json", &v)
	checked := 0
	for _, c := range v.Cases {
		comparator, ok := strings.CutPrefix(c.Category, "invalid_name:")
		if !ok || c.Request.Column == nil {
			continue
		}
		name := requestName(t, c.Request.Column.NameHex)
		if len(name) == 0 || len(name) > 65535 {
			continue
		}
		typ, err := Parse(comparator)
		if err != nil {
			t.Fatalf("%s: %v", comparator, err)
		}
		err = typ.Validate(name)
		switch {
		case c.Result == "accepted":
			if err != nil {
				t.Errorf("%s %s (%s): Validate = %v, Cassandra accepted it", comparator, c.Description, c.Method, err)
			}
		case c.Why != nil:
			if err == nil || err.Error() != *c.Why {
				t.Errorf("%s %s (%s): Validate = %v, want %q", comparator, c.Description, c.Method, err, *c.Why)
			}
			if _, ok := err.(*ValidationError); !ok {
				t.Errorf("%s %s: error is %T, want *ValidationError", comparator, c.Description, err)
			}
		case strings.HasPrefix(comparator, "CompositeType") && isStaticName(name):
			// Cassandra validates it, then fails inside its write path.
			if err == nil {
				t.Errorf("%s %s (%s): accepted a name that breaks Cassandra; want a clean refusal", comparator, c.Description, c.Method)
			}
		default:
			// A server-side failure after validation (the 4-byte decimal,
			// accepted by insert, times out when written a second time):
			// Validate accepts what Cassandra's validation accepts.
			if err != nil {
				t.Errorf("%s %s (%s): Validate = %v; Cassandra's validation accepted it", comparator, c.Description, c.Method, err)
			}
		}
		checked++
	}
	if checked < 150 {
		t.Fatalf("only %d invalid_name cases checked", checked)
	}
}

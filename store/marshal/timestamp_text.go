package marshal

import (
	"encoding/binary"
	"strconv"
	"strings"
	"time"
)

// timestampString renders milliseconds since the epoch in the style of
// Cassandra's TimestampSerializer, in UTC: "2006-01-02 15:04:05.000Z".
// (Cassandra 3.11's own getString uses "yyyy-MM-dd HH:mmXX" in the server's
// time zone and so drops seconds and milliseconds; the seconds and
// milliseconds are kept here so that FromString gives the value back, and
// the form is one of the patterns Cassandra's fromString accepts.) Instants
// outside years 1..9999 are rendered as the plain number of milliseconds,
// which fromString accepts too.
func timestampString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	ms := int64(be64(b))
	t := time.UnixMilli(ms).UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return strconv.FormatInt(ms, 10)
	}
	return t.Format("2006-01-02 15:04:05.000") + "Z"
}

// parseTimestamp accepts what Cassandra's TimestampSerializer accepts: the
// empty string, "now", an integer number of milliseconds, or a date
// "yyyy-MM-dd" optionally followed by ' ' or 'T' and "HH:mm", ":ss",
// ".SSS" (a count of milliseconds, as Java reads it), and a time zone
// ("Z", "+hh", "+hhmm", "+hh:mm", or after a blank "UTC", "GMT", "GMT+hh:mm"
// and the like). A date without a zone is taken as UTC.
func parseTimestamp(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	var ms int64
	switch {
	case strings.EqualFold(s, "now"):
		ms = time.Now().UnixMilli()
	case isInteger(s):
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, formatErrorf(err, "Unable to make long (for date) from: '%s'", s)
		}
		ms = v
	default:
		v, ok := parseDateText(s)
		if !ok {
			return nil, formatErrorf(nil, "Unable to coerce '%s' to a formatted date (long)", s)
		}
		ms = v
	}
	return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
}

// isInteger matches ^-?\d+$.
func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// dateScanner reads the fields of a date string left to right.
type dateScanner struct {
	s   string
	pos int
}

// digits reads between min and max decimal digits.
func (d *dateScanner) digits(min, max int) (int, bool) {
	start := d.pos
	for d.pos < len(d.s) && d.pos-start < max && d.s[d.pos] >= '0' && d.s[d.pos] <= '9' {
		d.pos++
	}
	if d.pos-start < min {
		return 0, false
	}
	v, _ := strconv.Atoi(d.s[start:d.pos])
	return v, true
}

func (d *dateScanner) char(c byte) bool {
	if d.pos < len(d.s) && d.s[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *dateScanner) done() bool { return d.pos == len(d.s) }

func parseDateText(s string) (int64, bool) {
	d := dateScanner{s: s}
	year, ok1 := d.digits(4, 4)
	ok2 := d.char('-')
	month, ok3 := d.digits(1, 2)
	ok4 := d.char('-')
	day, ok5 := d.digits(1, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return 0, false
	}
	var hour, minute, sec, milli int
	if d.pos < len(s) && (s[d.pos] == ' ' || s[d.pos] == 'T') && d.pos+1 < len(s) && s[d.pos+1] >= '0' && s[d.pos+1] <= '9' {
		d.pos++
		var ok bool
		if hour, ok = d.digits(1, 2); !ok || hour > 23 || !d.char(':') {
			return 0, false
		}
		if minute, ok = d.digits(1, 2); !ok || minute > 59 {
			return 0, false
		}
		if d.char(':') {
			if sec, ok = d.digits(1, 2); !ok || sec > 59 {
				return 0, false
			}
			if d.char('.') {
				if milli, ok = d.digits(1, 3); !ok {
					return 0, false
				}
			}
		}
	}
	offset, ok := parseZone(s[d.pos:])
	if !ok {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, milli*int(time.Millisecond), time.UTC)
	return t.UnixMilli() - int64(offset)*1000, true
}

// parseZone reads an optional time zone suffix and returns its offset from
// UTC in seconds.
func parseZone(z string) (int, bool) {
	if z == "" {
		return 0, true
	}
	if z[0] == ' ' {
		// Java's general time zone: a name or GMT+hh:mm, after a blank.
		z = z[1:]
		for _, name := range []string{"GMT", "UTC", "UT"} {
			if rest, found := strings.CutPrefix(z, name); found {
				if rest == "" {
					return 0, true
				}
				return parseNumericZone(rest)
			}
		}
		return parseNumericZone(z)
	}
	if z == "Z" {
		return 0, true
	}
	return parseNumericZone(z)
}

// parseNumericZone reads +hh, +hhmm or +hh:mm (or with '-').
func parseNumericZone(z string) (int, bool) {
	if len(z) < 2 || (z[0] != '+' && z[0] != '-') {
		return 0, false
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	d := dateScanner{s: z, pos: 1}
	h, ok := d.digits(1, 2)
	if !ok || h > 23 {
		return 0, false
	}
	m := 0
	if !d.done() {
		d.char(':')
		if m, ok = d.digits(2, 2); !ok || m > 59 {
			return 0, false
		}
	}
	if !d.done() {
		return 0, false
	}
	return sign * (h*3600 + m*60), true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

package badgerstore

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// formatCounter counts how often it is formatted.
type formatCounter struct{ n *int }

func (c formatCounter) String() string { *c.n++; return "formatted" }

// TestBadgerLoggerFormatsOnlyWhatIsLogged checks that Badger's messages
// below the logger's level are dropped before they are formatted, and the
// others logged at the level they map to.
func TestBadgerLoggerFormatsOnlyWhatIsLogged(t *testing.T) {
	for _, c := range []struct {
		level      slog.Level
		formatted  int
		wantLevels []string
	}{
		{slog.LevelInfo, 2, []string{"level=ERROR", "level=WARN"}},
		{slog.LevelDebug, 4, []string{"level=ERROR", "level=WARN", "level=DEBUG"}},
	} {
		var out bytes.Buffer
		n := 0
		b := badgerLogger{slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: c.level}))}
		arg := formatCounter{&n}
		b.Errorf("e %v", arg)
		b.Warningf("w %v", arg)
		b.Infof("i %v", arg)
		b.Debugf("d %v", arg)
		if n != c.formatted {
			t.Errorf("logger at %v: %d messages formatted, want %d", c.level, n, c.formatted)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != c.formatted {
			t.Fatalf("logger at %v logged %d lines, want %d:\n%s", c.level, len(lines), c.formatted, out.String())
		}
		for _, line := range lines {
			if !strings.Contains(line, "component=badger") || !strings.Contains(line, "formatted") {
				t.Errorf("logger at %v: line %q", c.level, line)
			}
		}
		for _, l := range c.wantLevels {
			if !strings.Contains(out.String(), l) {
				t.Errorf("logger at %v: no %s line in\n%s", c.level, l, out.String())
			}
		}
	}
}

//go:build !linux

package badgerstore

import (
	"context"
	"log/slog"
)

// mappedTrimmer reclaims the pages of mapped table files on Linux only
// (see maptrim_linux.go); elsewhere the kernel manages them alone.
type mappedTrimmer struct{}

func newMappedTrimmer(string, int64) (*mappedTrimmer, error) { return nil, nil }

func (e *Engine) trimMappedTables(context.Context) {}

func (m *mappedTrimmer) trimIfOver(context.Context, *slog.Logger) {}

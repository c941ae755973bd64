package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// checkpointVersion is the format version of checkpoint files.
const checkpointVersion = 1

// Checkpoint records how far a conversion got, so that a new run resumes
// there. It is replaced atomically after the sink has made everything it
// describes durable.
type Checkpoint struct {
	Version int `json:"version"`
	// Keyspace is the source keyspace; TargetKeyspace the one written.
	Keyspace       string `json:"keyspace"`
	TargetKeyspace string `json:"target_keyspace"`
	// Prepared is set once the schema is in the target.
	Prepared bool `json:"prepared"`
	// SinkOffset is a resumable sink's output length (the script's bytes).
	SinkOffset int64                        `json:"sink_offset"`
	Families   map[string]*FamilyCheckpoint `json:"families"`
}

// FamilyCheckpoint is one family's progress.
type FamilyCheckpoint struct {
	// Shape is the shape chosen on the first run, kept on resume.
	Shape supercol.Shape `json:"shape"`
	// Position is after the last row fully acknowledged by the sink.
	Position Position `json:"position"`
	Done     bool     `json:"done"`
	// Stats are the counts of the rows up to Position.
	Stats FamilyStats `json:"stats"`
}

// LoadCheckpoint reads a checkpoint; a missing file is (nil, nil).
func LoadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if c.Version != checkpointVersion {
		return nil, fmt.Errorf("checkpoint %s: version %d, expected %d", path, c.Version, checkpointVersion)
	}
	if c.Families == nil {
		c.Families = map[string]*FamilyCheckpoint{}
	}
	return &c, nil
}

// Save replaces the checkpoint file atomically: a synced temporary file
// renamed over it, then the directory synced.
func (c *Checkpoint) Save(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	cleanup := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write checkpoint %s: %w", path, err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		return cleanup(err)
	}
	if err := tmp.Sync(); err != nil {
		return cleanup(err)
	}
	if err := tmp.Close(); err != nil {
		return cleanup(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write checkpoint %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		// Not every file system syncs directories; the rename stands anyway.
		_ = d.Sync()
		d.Close()
	}
	return nil
}

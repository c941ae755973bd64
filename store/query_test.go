package store

import (
	"bytes"
	"testing"
)

// TestSliceResultRoom holds a result given room by UseRoom to what Keep
// promises: every copy stays as it was kept while later ones outgrow the
// room and the arenas after it, and the room is used before anything is
// allocated.
func TestSliceResultRoom(t *testing.T) {
	var cells [1]Cell
	var room [16]byte
	var r SliceResult
	r.UseRoom(cells[:], room[:])
	if len(r.Cells) != 0 || cap(r.Cells) != 1 {
		t.Fatalf("cells after UseRoom: len %d cap %d, want 0 and 1", len(r.Cells), cap(r.Cells))
	}
	first := r.Keep([]byte("in the room"))
	if &first[0] != &room[0] {
		t.Fatal("the first copy was not made in the room")
	}
	r.Cells = append(r.Cells, Cell{Name: first})
	if &r.Cells[0] != &cells[0] {
		t.Fatal("the first cell was not appended in the room")
	}
	var kept, want [][]byte
	kept, want = append(kept, first), append(want, []byte("in the room"))
	for i := range 200 {
		b := bytes.Repeat([]byte{byte(i)}, i*7%300)
		kept, want = append(kept, r.Keep(b)), append(want, bytes.Clone(b))
	}
	for i := range kept {
		if !bytes.Equal(kept[i], want[i]) {
			t.Fatalf("copy %d changed: %x, want %x", i, kept[i], want[i])
		}
		if cap(kept[i]) != len(kept[i]) {
			t.Fatalf("copy %d has room past its end (cap %d, len %d)", i, cap(kept[i]), len(kept[i]))
		}
	}
	if r.Keep(nil) != nil {
		t.Fatal("Keep(nil) is not nil")
	}
	// Reserve replaces a full arena by one of the size asked, once.
	r.Reserve(1000)
	reserved := r.Keep(bytes.Repeat([]byte{1}, 600))
	r.Reserve(400)
	if next := r.Keep(bytes.Repeat([]byte{2}, 400)); &reserved[0] != &r.arena[0] || &next[0] != &r.arena[600] || cap(r.arena) != 1000 {
		t.Fatalf("copies after Reserve(1000): not in one arena of 1000 bytes (cap %d)", cap(r.arena))
	}
	if reserved[0] != 1 || len(reserved) != 600 || kept[200][0] != 199 {
		t.Fatal("a reserve changed earlier copies")
	}
	// The first arena past a small room is arenaFirst, not arenaGrowth.
	var s SliceResult
	s.UseRoom(nil, room[:4:4])
	s.Keep([]byte("12345"))
	if got := cap(s.arena); got != arenaFirst {
		t.Fatalf("arena past a room of 4: cap %d, want %d", got, arenaFirst)
	}
}

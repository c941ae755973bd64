package marshal

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/thriftbridge/thriftbridge/internal/golden"
)

// loadVectors reads file of the golden vectors, testdata/cassandra-3.11 at
// the module root, into into. The vectors were observed on a real
// Cassandra 3.11.9 and are part of the repository, so a missing file fails
// the test.
func loadVectors(tb testing.TB, file string, into any) {
	tb.Helper()
	data, err := os.ReadFile(golden.Path(tb, "testdata", "cassandra-3.11", file))
	if err != nil {
		tb.Fatalf("golden vectors: %v (they are part of the repository)", err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
}

func unhex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

type orderingVectors struct {
	Types []orderingVector `json:"types"`
}

type orderingVector struct {
	Comparator  string   `json:"comparator"`
	Described   string   `json:"described_comparator_type"`
	InsertedHex []string `json:"inserted_hex"`
	OrderHex    []string `json:"cassandra_order_hex"`
	Rejected    []struct {
		NameHex string `json:"name_hex"`
		Why     string `json:"why"`
	} `json:"rejected"`
	EqualGroups []struct {
		Names []string `json:"inserted_names_hex_in_insert_order"`
	} `json:"equal_groups"`
}

type validationVectors struct {
	Cases []validationCase `json:"cases"`
}

type validationCase struct {
	Category    string `json:"category"`
	Description string `json:"description"`
	Method      string `json:"method"`
	Request     struct {
		Column *struct {
			NameHex string `json:"name_hex"`
		} `json:"column"`
	} `json:"request"`
	Result string  `json:"result"`
	Why    *string `json:"why"`
}

type compositeSliceVectors struct {
	Comparator string   `json:"comparator"`
	Stored     []string `json:"stored_order_hex"`
	Inserted   []string `json:"inserted_hex_in_insert_order"`
	Queries    []struct {
		Description string   `json:"description"`
		Start       string   `json:"start_hex"`
		Finish      string   `json:"finish_hex"`
		Reversed    bool     `json:"reversed"`
		Count       int      `json:"count"`
		Result      []string `json:"result_hex"`
		Error       *struct {
			Why string `json:"why"`
		} `json:"error"`
	} `json:"queries"`
	NamesPredicates []struct {
		Names  []string `json:"column_names_hex"`
		Result []string `json:"result_hex"`
	} `json:"names_predicates"`
}

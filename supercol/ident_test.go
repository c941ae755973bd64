package supercol

import "testing"

func TestQuoteIdent(t *testing.T) {
	cases := map[string]string{
		"key":         "key",
		"column1":     "column1",
		"_x9":         "_x9",
		"BlogEntries": `"BlogEntries"`,
		"select":      `"select"`,
		"token":       `"token"`,
		"2fa":         `"2fa"`,
		"e-mail":      `"e-mail"`,
		"":            `""`,
		`say"hi"`:     `"say""hi"""`,
		"été":         `"été"`,
	}
	for in, want := range cases {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestColumnIdent(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"first_name", "first_name", true},
		{"First Name", "First_Name", true},
		{"shipped-at", "shipped_at", true},
		{"été", "__t__", true},
		{"", "", false},
		{string([]byte{0xff}), "", false},
	}
	for _, tc := range cases {
		got, ok := columnIdent(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("columnIdent(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

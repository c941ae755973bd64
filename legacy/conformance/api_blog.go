package conformance

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// timeUUID is a version 1 UUID for a 100-ns timestamp since 1582-10-15,
// with a fixed clock sequence and node.
func timeUUID(ticks uint64, node byte) []byte {
	u := make([]byte, 16)
	binary.BigEndian.PutUint32(u[0:], uint32(ticks))
	binary.BigEndian.PutUint16(u[4:], uint16(ticks>>32))
	binary.BigEndian.PutUint16(u[6:], uint16(ticks>>48)&0x0fff|0x1000)
	u[8], u[9] = 0x80, 0x01
	u[15] = node
	return u
}

// blogTicks is the time of post i: one minute apart from an instant in 2010.
func blogTicks(i int) uint64 {
	const base = uint64(0x01df_0000_0000_0000)
	return base + uint64(i)*60*10_000_000
}

func newBlogEnv(t *testing.T, target Target) *apiEnv {
	utf8 := "UTF8Type"
	return newKeyspaceEnv(t, target, Options{}, "Blog",
		standardCF("Authors", comparator(utf8), keyValidation(utf8), defaultValidation(utf8),
			indexedColumn(b("country"), utf8, "authors_country")),
		standardCF("BlogEntries", comparator(utf8), keyValidation(utf8), defaultValidation(utf8)),
		standardCF("TaggedPosts", comparator("TimeUUIDType"), keyValidation(utf8), defaultValidation(utf8)),
		superCF("Comments", comparator("TimeUUIDType"), subcomparator("BytesType"), keyValidation(utf8)))
}

func runBlogTests(t *testing.T, target Target) {
	t.Run("EndToEnd", func(t *testing.T) {
		a := newBlogEnv(t, target)
		authors := map[string][]string{"ada": {"Ada Lovelace", "UK"}, "grace": {"Grace Hopper", "US"}, "alan": {"Alan Turing", "UK"}}
		m := map[string]map[string][]*cassandra.Mutation{}
		for key, v := range authors {
			m[key] = map[string][]*cassandra.Mutation{"Authors": {
				insertMutation(col(b("name"), b(v[0]), 1)), insertMutation(col(b("country"), b(v[1]), 1)),
			}}
		}
		a.batch(m)

		// 25 posts, written in a scrambled order; every post is tagged
		// "cassandra", every third one "thrift" too.
		const posts = 25
		for n := 0; n < posts; n++ {
			i := (n * 7) % posts
			key := fmt.Sprintf("post-%02d", i)
			author := []string{"ada", "grace", "alan"}[i%3]
			tags := []string{"cassandra"}
			if i%3 == 0 {
				tags = append(tags, "thrift")
			}
			rows := map[string]map[string][]*cassandra.Mutation{key: {"BlogEntries": {
				insertMutation(col(b("title"), b(fmt.Sprintf("Post %d", i)), 1)),
				insertMutation(col(b("body"), b("text of post "+key), 1)),
				insertMutation(col(b("author"), b(author), 1)),
			}}}
			for _, tag := range tags {
				rows[tag] = map[string][]*cassandra.Mutation{"TaggedPosts": {insertMutation(col(timeUUID(blogTicks(i), 1), b(key), 1))}}
			}
			a.batch(rows)
		}

		// The ten most recent posts of a tag: a reversed slice.
		recent := a.slice("cassandra", parent("TaggedPosts"), byRange(nil, nil, true, 10))
		var got, want []string
		for _, c := range recent {
			got = append(got, string(c.Column.Value))
		}
		for i := posts - 1; i >= posts-10; i-- {
			want = append(want, fmt.Sprintf("post-%02d", i))
		}
		equalStrings(t, "ten most recent cassandra posts", got, want)
		// The next page starts at the last one seen.
		next := a.slice("cassandra", parent("TaggedPosts"), byRange(recent[len(recent)-1].Column.Name, nil, true, 11))
		got, want = nil, nil
		for _, c := range next[1:] {
			got = append(got, string(c.Column.Value))
		}
		for i := posts - 11; i >= posts-20; i-- {
			want = append(want, fmt.Sprintf("post-%02d", i))
		}
		equalStrings(t, "the next ten", got, want)
		thrift := a.slice("thrift", parent("TaggedPosts"), byRange(nil, nil, true, 3))
		got = nil
		for _, c := range thrift {
			got = append(got, string(c.Column.Value))
		}
		equalStrings(t, "three most recent thrift posts", got, []string{"post-24", "post-21", "post-18"})
		if n := a.count("thrift", parent("TaggedPosts"), everything()); n != 9 {
			t.Errorf("thrift posts = %d, want 9", n)
		}
		// Posts between two instants (TimeUUIDType compares the node bytes
		// signed, so 0x7f is the largest).
		between := a.slice("cassandra", parent("TaggedPosts"), byRange(timeUUID(blogTicks(5), 0), timeUUID(blogTicks(7), 0x7f), false, 100))
		got = nil
		for _, c := range between {
			got = append(got, string(c.Column.Value))
		}
		equalStrings(t, "posts 5 to 7", got, []string{"post-05", "post-06", "post-07"})

		// An entry and its author, by key.
		entry := a.slice("post-07", parent("BlogEntries"), everything())
		equalStrings(t, "entry columns", names(entry), []string{"author", "body", "title"})
		author := string(a.mustGet("post-07", colPath("BlogEntries", b("author"))).Column.Value)
		who := a.mustGet(author, colPath("Authors", b("name")))
		if string(who.Column.Value) != "Grace Hopper" {
			t.Errorf("author of post-07 = %q", who.Column.Value)
		}
		uk := a.indexed("Authors", "", 10, byNames(b("name"), b("country")), eq(b("country"), b("UK")))
		equalStrings(t, "UK authors", sortedKeys(uk), []string{"ada", "alan"})
		// The indexed column left out of the predicate.
		uk = a.indexed("Authors", "", 10, byNames(b("name")), eq(b("country"), b("UK")))
		if a.Diverges("index-predicate") {
			equalStrings(t, "UK authors, names only", sortedKeys(uk), nil)
		} else {
			equalStrings(t, "UK authors, names only", sortedKeys(uk), []string{"ada", "alan"})
		}

		// Comments: a super column per comment, named by its time.
		order := []int{3, 0, 4, 1, 2}
		for _, i := range order {
			a.insert("post-07", superParent("Comments", timeUUID(blogTicks(100+i), 2)), col(b("commenter"), b(fmt.Sprintf("reader%d", i)), 1))
			a.insert("post-07", superParent("Comments", timeUUID(blogTicks(100+i), 2)), col(b("body"), b(fmt.Sprintf("comment %d", i)), 1))
		}
		comments := a.slice("post-07", parent("Comments"), everything())
		got = nil
		for _, c := range comments {
			if c.SuperColumn == nil || len(c.SuperColumn.Columns) != 2 {
				t.Fatalf("comment = %s", describeCosc(c))
			}
			got = append(got, string(c.SuperColumn.Columns[0].Value)) // body sorts before commenter
		}
		equalStrings(t, "comments in chronological order", got, []string{"comment 0", "comment 1", "comment 2", "comment 3", "comment 4"})
		latest := a.slice("post-07", parent("Comments"), byRange(nil, nil, true, 1))
		if len(latest) != 1 || string(latest[0].SuperColumn.Columns[1].Value) != "comment 4" && string(latest[0].SuperColumn.Columns[0].Value) != "comment 4" {
			t.Errorf("latest comment = %v", latest)
		}
		commenter := a.mustGet("post-07", superPath("Comments", timeUUID(blogTicks(102), 2), b("commenter")))
		if string(commenter.Column.Value) != "reader2" {
			t.Errorf("commenter of comment 2 = %q", commenter.Column.Value)
		}
		if n := a.count("post-07", parent("Comments"), everything()); n != 5 {
			t.Errorf("comment count = %d", n)
		}
		// Deleting a post: its entry row, tag columns and comments.
		a.batch(map[string]map[string][]*cassandra.Mutation{
			"post-24":   {"BlogEntries": {deletion(ts(2), nil, nil)}, "Comments": {deletion(ts(2), nil, nil)}},
			"cassandra": {"TaggedPosts": {deletion(ts(2), nil, byNames(timeUUID(blogTicks(24), 1)))}},
			"thrift":    {"TaggedPosts": {deletion(ts(2), nil, byNames(timeUUID(blogTicks(24), 1)))}},
		})
		top := a.slice("thrift", parent("TaggedPosts"), byRange(nil, nil, true, 1))
		if len(top) != 1 || string(top[0].Column.Value) != "post-21" {
			t.Errorf("most recent thrift post after deleting post-24 = %v", top)
		}
		if got := a.slice("post-24", parent("BlogEntries"), everything()); len(got) != 0 {
			t.Errorf("deleted entry: %v", names(got))
		}
		err := a.C.Insert(Ctx(t), b("cassandra"), parent("TaggedPosts"), col(b("not a uuid"), b("x"), 1), one)
		expectIRE(t, "a tag column that is not a TimeUUID", err, "")
	})
}

package cqlusers_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/auth/cqlusers"
	"github.com/thriftbridge/thriftbridge/internal/testcluster"
)

// TestConcurrentUpdatesAllSurvive: writers that each add one user at the
// same time, through their own Store, lose none of the others' users; a
// reader's stamp changes with each change, and not without one.
func TestConcurrentUpdatesAllSurvive(t *testing.T) {
	for _, c := range testcluster.Require(t, "the users store in the cluster") {
		t.Run(c.Name, func(t *testing.T) {
			ctx := context.Background()
			session := testcluster.Session(t, c)
			meta := testcluster.Keyspace("cqlusers")
			testcluster.DropWhenDone(t, session, meta)
			reader, err := cqlusers.Open(ctx, session, meta, "")
			if err != nil {
				t.Fatal(err)
			}
			stamp, err := reader.Stamp(ctx)
			if err != nil || stamp != "" {
				t.Fatalf("stamp of no users: %q, %v", stamp, err)
			}
			const writers = 6
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s, err := cqlusers.Open(ctx, session, meta, "")
					if err == nil {
						err = s.Update(ctx, func(u *auth.Users) (bool, error) {
							u.Users[fmt.Sprintf("user%d", i)] = &auth.User{Hash: "hash"}
							return true, nil
						})
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("writer %d: %v", i, err)
				}
			}
			users, stamp, err := reader.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(users.Names(), ","); got != "user0,user1,user2,user3,user4,user5" {
				t.Errorf("users after %d concurrent adds: %s", writers, got)
			}
			if stamp != fmt.Sprint(writers) {
				t.Errorf("version after %d changes: %s", writers, stamp)
			}
			if err := reader.Update(ctx, func(*auth.Users) (bool, error) { return false, nil }); err != nil {
				t.Fatal(err)
			}
			if again, err := reader.Stamp(ctx); err != nil || again != stamp {
				t.Errorf("stamp after an update that changed nothing: %q (was %q), %v", again, stamp, err)
			}
		})
	}
}

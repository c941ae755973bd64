package legacy

import (
	"context"
	"net"
	"reflect"
	"testing"
)

// TestRingInstances: the instances a cluster ring lists, sorted and
// deduplicated, in Cassandra's bare-host form when they share a port, and
// each range's list rotated one step further.
func TestRingInstances(t *testing.T) {
	connected := withLocalAddr(context.Background(), &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 9160})
	for _, c := range []struct {
		name string
		ring RingConfig
		ctx  context.Context
		want []string
	}{
		{"the address the client connected to", RingConfig{}, connected, []string{"10.0.0.5"}},
		{"advertised, with peers on its port", RingConfig{Advertise: "10.0.0.2:9160", Peers: []string{"10.0.0.3:9160", "10.0.0.1:9160", "10.0.0.2:9160"}}, connected,
			[]string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}},
		{"peers on other ports", RingConfig{Peers: []string{"10.0.0.5:9161"}}, connected, []string{"10.0.0.5:9160", "10.0.0.5:9161"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := NewHandler(nil, HandlerConfig{Ring: c.ring}, nil)
			got := h.instances(c.ctx)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("instances %v, want %v", got, c.want)
			}
			for i := range 2 * len(got) {
				r := rotated(got, i)
				if r[0] != got[i%len(got)] || len(r) != len(got) {
					t.Errorf("range %d lists %v", i, r)
				}
			}
		})
	}
}

package partition

import (
	"fmt"
	"strings"
)

// classPrefix is the package of Cassandra's partitioner classes.
const classPrefix = "org.apache.cassandra.dht."

// ByName returns the partitioner named by its short class name
// ("Murmur3Partitioner") or its fully qualified one
// ("org.apache.cassandra.dht.Murmur3Partitioner"), as cassandra.yaml
// accepts them. Names are case-sensitive, like Java class names.
func ByName(name string) (Partitioner, error) {
	short := strings.TrimPrefix(name, classPrefix)
	switch short {
	case murmur3Short:
		return Murmur3Partitioner{}, nil
	case randomShort:
		return RandomPartitioner{}, nil
	case byteOrderedShort:
		return ByteOrderedPartitioner{}, nil
	case orderPreservingShort:
		return OrderPreservingPartitioner{}, nil
	}
	return nil, fmt.Errorf("unknown partitioner %q: expected one of %s, %s, %s, %s (optionally prefixed with %q)",
		name, murmur3Short, randomShort, byteOrderedShort, orderPreservingShort, classPrefix)
}

package legacy

import (
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// On one node every consistency level is met by the local write or read;
// what remains are Cassandra's refusals of levels that make no sense for
// the operation.

func knownConsistency(cl cassandra.ConsistencyLevel) error {
	if cl < cassandra.ConsistencyLevel_ONE || cl > cassandra.ConsistencyLevel_LOCAL_ONE {
		return iref("unknown consistency level %d", int64(cl))
	}
	return nil
}

func validateForRead(cl cassandra.ConsistencyLevel) error {
	if err := knownConsistency(cl); err != nil {
		return err
	}
	if cl == cassandra.ConsistencyLevel_ANY {
		return ire("ANY ConsistencyLevel is only supported for writes")
	}
	return nil
}

func validateForWrite(cl cassandra.ConsistencyLevel) error {
	if err := knownConsistency(cl); err != nil {
		return err
	}
	if cl == cassandra.ConsistencyLevel_SERIAL || cl == cassandra.ConsistencyLevel_LOCAL_SERIAL {
		return ire("You must use conditional updates for serializable writes")
	}
	return nil
}

func validateCounterForWrite(t *store.Table, cl cassandra.ConsistencyLevel) error {
	if err := knownConsistency(cl); err != nil {
		return err
	}
	switch cl {
	case cassandra.ConsistencyLevel_ANY:
		return iref("Consistency level ANY is not yet supported for counter table %s", t.Def.Name)
	case cassandra.ConsistencyLevel_SERIAL, cassandra.ConsistencyLevel_LOCAL_SERIAL:
		return ire("Counter operations are inherently non-serializable")
	}
	return nil
}

"""The checks of the Python client programs: clients/python (the raw
Thrift client, Python 3) and clients/pycassa (pycassa, Jython 2.7), so this
module is written for both Pythons.

Every check prints `ok NAME` or `FAIL NAME: detail`; finish() prints the
closing line `N passed, N failed` and exits 0 only if nothing failed.

Where thriftd departs from Cassandra 3.11 on purpose, a check asks
diverges(name) and asserts the behaviour of the server it talks to:
Cassandra 3.11's on Cassandra, thriftd's on thriftd. The names are those
of legacy/conformance/divergences.go. The server is told by
describe_version (server()): 20.x is Cassandra 2.2-3.11, 19.x thriftd
(whose default, 19.39.0, is Cassandra 2.1's).
"""

from __future__ import print_function

import os
import sys
import traceback

from thrift.Thrift import TException

# thriftd's deliberate departures from Cassandra 3.11 that the programs
# meet: name -> (what Cassandra 3.11 does, what thriftd does).
DIVERGENCES = {
    "static-reversed": (
        "3.11 returns a reversed slice of a family with column_metadata out of order (declared columns "
        "first): age, name, email, state for age < email < name < state",
        "returns the reversed comparator order"),
    "index-predicate": (
        "3.11's get_indexed_slices (and get_range_slices with a row_filter) loses rows when the slice predicate "
        "leaves out a column of the index clause: with another expression's column left out it returns no row; "
        "with the indexed column left out, only the declared columns (column_metadata) the predicate selects, "
        "and no row where it selects none",
        "filters on every column of the clause whatever the predicate selects, as 2.1 did, and returns each "
        "matching row with the columns the predicate selects"),
    "super-internal-columns": (
        "3.11 describes a Super family with two internal column_metadata entries: an empty name typed "
        "MapType(subcomparator, default validator) and 'value'",
        "describes only the columns a client declared; clients that decode column_metadata names with "
        "the comparator (helenus) break on the empty name"),
}


class _Run(object):
    """The tally of one program's run."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.on_cassandra = None  # set by server()


_run = _Run()


def server(version):
    """Takes the server's describe_version, prints which server it is, and
    reports whether it is Cassandra 3.11."""
    _run.on_cassandra = int(version.split(".")[0]) >= 20
    print("server: %s (describe_version %s)" % ("Cassandra 3.11" if _run.on_cassandra else "thriftd", version))
    return _run.on_cassandra


def diverges(name):
    """Reports whether the server is Cassandra 3.11, where the named
    divergence means Cassandra's behaviour is the one to assert; on thriftd,
    thriftd's. Says which it asserts."""
    cassandra, thriftd = DIVERGENCES[name]  # an unknown name is a bug here: KeyError
    if _run.on_cassandra is None:
        raise RuntimeError("diverges(%r) before describe_version" % name)
    if _run.on_cassandra:
        print("divergence %s: asserting Cassandra 3.11's behaviour: %s" % (name, cassandra))
    else:
        print("divergence %s: asserting thriftd's behaviour: %s" % (name, thriftd))
    sys.stdout.flush()
    return _run.on_cassandra


def check(name, cond, detail=""):
    if cond:
        _run.passed += 1
        print("ok", name)
    else:
        _run.failed += 1
        print("FAIL %s: %s" % (name, detail))
    sys.stdout.flush()


def eq(name, got, want):
    check(name, got == want, "got %r, want %r" % (got, want))


def eq_ttl(name, got, want):
    """Checks a TTL read back: the TTL written, or, against a server that
    reports the seconds left (thriftd over a CQL cluster:
    THRIFTBRIDGE_REMAINING_TTL, set by clients/matrix.sh), up to ten
    seconds less."""
    remaining = os.environ.get("THRIFTBRIDGE_REMAINING_TTL") is not None
    ok = got == want or (remaining and got is not None and want - 10 <= got < want)
    check(name, ok, "got %r, want %r%s" % (got, want, " or up to 10 s less" if remaining else ""))


def crashed(name, e):
    """Counts an exception that ended a step, or the run, as a failure."""
    _run.failed += 1
    print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
    if not isinstance(e, TException):  # a server's answer needs no trace
        traceback.print_exc(file=sys.stdout)
    sys.stdout.flush()


def step(name):
    """Runs the decorated function at once; an exception fails the step."""
    def run(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - a crash is a failed check
            crashed(name, e)
        return fn
    return run


def expect_error(name, exc_type, fn):
    try:
        fn()
    except exc_type as e:
        check(name, True)
        print("   (%s: %s)" % (exc_type.__name__, getattr(e, "why", "") or e))
        return
    except Exception as e:  # noqa: BLE001
        check(name, False, "raised %s: %s, want %s" % (type(e).__name__, e, exc_type.__name__))
        return
    check(name, False, "no error, want %s" % exc_type.__name__)


def finish(main):
    """Runs main, counting a crash as a failure, prints the closing line
    and exits 0 only if something passed and nothing failed."""
    try:
        main()
    except Exception as e:  # noqa: BLE001 - report, then count as failed
        crashed("run", e)
    print("%d passed, %d failed" % (_run.passed, _run.failed))
    sys.stdout.flush()
    sys.exit(0 if _run.failed == 0 and _run.passed > 0 else 1)

// A Thrift-era Node.js application on helenus 0.6.10, whose bindings are
// generated from Cassandra's own cassandra.thrift (API 19.35.0), unmodified.
//
//   node helenus_check.js HOST:PORT      (run.sh installs helenus first)
//
// Every check prints `ok NAME` or `FAIL NAME: detail`; the last line is
// `N passed, N failed`. The keyspace is fresh per run and dropped at the end.
//
// helenus predates Node 7, which removed process.EventEmitter. Its
// high-level API has no super columns, no range scans and cannot decode
// counter rows, so an application of the time used the generated client
// underneath (conn._client) for those, as this one does. Neither can write
// a negative i64 (helenus-thrift's encoder never ends on one) nor read one
// (it reads unsigned), so its counters only count up: the client is run
// unchanged, and other programs of the matrix check negative deltas.
//
// Where thriftd departs from Cassandra 3.11 on purpose (see DIVERGENCES),
// the check asks diverges(name) and asserts the behaviour of the server it
// talks to: Cassandra 3.11's on Cassandra, thriftd's on thriftd. The server
// is told by describe_version: 20.x is Cassandra 2.2-3.11, 19.x thriftd
// (whose default, 19.39.0, is Cassandra 2.1's).
process.EventEmitter = require('events').EventEmitter;
var helenus = require('helenus');
var T = require('helenus/lib/cassandra/cassandra_types');
var assert = require('assert');

var addr = process.argv[2] || '127.0.0.1:9160';
var ksName = 'helenus_' + process.pid + '_' + (Date.now() % 1e9);
var ONE = helenus.ConsistencyLevel.ONE;
var passed = 0, failed = 0;

function ok(name) { passed++; console.log('ok', name); }
function fail(name, err) {
  failed++;
  var why = err && err.why !== undefined ? err.name + ' ' + JSON.stringify(err.why)
    : err && err.stack ? err.stack.split('\n').slice(0, 8).join('\n') : err;
  console.log('FAIL ' + name + ': ' + why);
}

// step(name, fn(cb)) runs fn; an error passed to cb or thrown (a failed
// assert) fails the step, and the run goes on with the next one.
function step(name, fn) {
  return function(next) {
    var done = false;
    function cb(err) {
      if (done) return; done = true;
      if (err) fail(name, err); else ok(name);
      next();
    }
    try { fn(cb); } catch (e) { cb(e); }
  };
}
function series(fns, done) { var i = 0; (function go() { if (i === fns.length) return done(); fns[i++](go); })(); }
function guard(cb, fn) { return function(e, v) { if (e) return cb(e); try { fn(v); } catch (x) { return cb(x); } }; }
function expectError(name, cb) {
  return function(e) {
    if (!e) return cb(new Error('no error, want ' + name));
    if (String(e.name).indexOf(name) < 0) return cb(new Error('got ' + e.name + ': ' + e.message + ', want ' + name));
    console.log('   (' + e.name + ': ' + (e.why !== undefined ? e.why : e.message) + ')');
    cb();
  };
}
// assertTtl checks a TTL read back: the TTL written, or, against a server
// that reports the seconds left (thriftd over a CQL cluster:
// THRIFTBRIDGE_REMAINING_TTL set by clients/matrix.sh), at most ten seconds
// less.
function assertTtl(got, want) {
  if (got === want) return;
  if (process.env.THRIFTBRIDGE_REMAINING_TTL && got < want && got >= want - 10) return;
  throw new Error('ttl: want ' + want + (process.env.THRIFTBRIDGE_REMAINING_TTL ? ' or up to 10 s less' : '') + ', got ' + got);
}
function names(row) { var out = []; for (var i = 0; i < row.count; i++) out.push(row[i].name); return out; }
// The generated code leaves out a string field that is '' (falsy); an empty
// Buffer is written, which is what a key range from the first key needs.
var EMPTY = Buffer.alloc(0);
function micros() { return Date.now() * 1000; }
function full(count, reversed) { return new T.SlicePredicate({slice_range: new T.SliceRange({start: '', finish: '', reversed: !!reversed, count: count || 100})}); }
function byNames(ns) { return new T.SlicePredicate({column_names: ns}); }

// thriftd's deliberate departures from Cassandra 3.11 that this program
// meets, named as legacy/conformance/divergences.go names them.
var DIVERGENCES = {
  'static-reversed': {
    cassandra: '3.11 returns a reversed slice of a family with column_metadata out of order (declared columns first): state, zip, name for name < state < zip, state declared',
    thriftd: 'returns the reversed comparator order'},
  'index-predicate': {
    cassandra: "3.11's get_indexed_slices (and get_range_slices with a row_filter) loses rows when the slice predicate leaves out a column of the index clause: with another expression's column left out it returns no row; with the indexed column left out, only the declared columns (column_metadata) the predicate selects, and no row where it selects none",
    thriftd: "filters on every column of the clause whatever the predicate selects, as 2.1 did, and returns each matching row with the columns the predicate selects"},
  'super-internal-columns': {
    cassandra: "3.11 describes a Super family with two internal column_metadata entries: an empty name typed MapType(subcomparator, default validator) and 'value'",
    thriftd: 'describes only the columns a client declared; clients that decode column_metadata names with the comparator (helenus) break on the empty name'},
};
var onCassandra = null; // set from describe_version by the first step
// diverges(name) reports whether the server is Cassandra 3.11, where the
// named divergence means Cassandra's behaviour is the one to assert; on
// thriftd, thriftd's. It says which it asserts.
function diverges(name) {
  var d = DIVERGENCES[name];
  if (!d) throw new Error('unknown divergence ' + name);
  if (onCassandra === null) throw new Error('diverges(' + name + ') before describe_version');
  console.log('divergence ' + name + ": asserting " + (onCassandra ? "Cassandra 3.11's behaviour: " + d.cassandra : "thriftd's behaviour: " + d.thriftd));
  return onCassandra;
}

var conn = new helenus.Connection({host: addr, timeout: 10000});
conn.on('error', function(e) { fail('connection', e); finish(); });

var ks, users, nums, hits, timeline, events, items, typed, stamps, ints, created = false;

function finish() {
  function end() {
    console.log(passed + ' passed, ' + failed + ' failed');
    try { conn.close(); } catch (e) { /* already closed */ }
    process.exit(failed === 0 && passed > 0 ? 0 : 1);
  }
  if (!created) return end();
  created = false;
  conn.dropKeyspace(ksName, function(e) { if (e) fail('dropKeyspace', e); else ok('dropKeyspace'); end(); });
}
setTimeout(function() { fail('run', new Error('timed out after 90 s')); finish(); }, 90000).unref();

conn.connect(function(err) {
  if (err) { fail('connect', err); return finish(); }
  ok('connect');
  series([
    // Cassandra 2.2-3.11 answer 20.1.0; thriftd 19.39.0 (Cassandra 2.1's API,
    // whose behaviour it keeps) unless started with --api-version.
    step('describe_version', function(cb) { conn._client.describe_version(guard(cb, function(v) {
      assert.ok(Number(v.split('.')[0]) >= 19, 'describe_version ' + v + ', want 19 or above');
      onCassandra = Number(v.split('.')[0]) >= 20;
      console.log('server: ' + (onCassandra ? 'Cassandra 3.11' : 'thriftd') + ' (describe_version ' + v + ')');
      cb(); })); }),
    step('createKeyspace', function(cb) { conn.createKeyspace(ksName, guard(cb, function() { created = true; cb(); })); }),
    step('use', function(cb) { conn.use(ksName, guard(cb, function(k) { ks = k; cb(); })); }),
    step('createColumnFamily users (indexed)', function(cb) {
      ks.createColumnFamily('users', {comparator_type: 'UTF8Type', key_validation_class: 'UTF8Type', default_validation_class: 'UTF8Type',
        columns: [{name: 'state', validation_class: 'UTF8Type', index_type: 0}]}, cb); }),
    step('createColumnFamily nums (LongType)', function(cb) { ks.createColumnFamily('nums', {comparator_type: 'LongType', default_validation_class: 'UTF8Type', key_validation_class: 'UTF8Type'}, cb); }),
    step('createColumnFamily hits (counters)', function(cb) { ks.createColumnFamily('hits', {comparator_type: 'UTF8Type', default_validation_class: 'CounterColumnType', key_validation_class: 'UTF8Type'}, cb); }),
    step('createColumnFamily timeline (composite)', function(cb) { ks.createColumnFamily('timeline', {comparator_type: 'CompositeType(UTF8Type,LongType)', default_validation_class: 'UTF8Type', key_validation_class: 'UTF8Type'}, cb); }),
    // A UTF8Type super column name, not LongType: Cassandra 3.11 describes a
    // super cf with two internal column_metadata entries (names '' and
    // 'value', divergence "super-internal-columns") that helenus decodes with
    // the comparator, and a LongType decoder throws on them: conn.use()
    // fails with RangeError in decodeLong on the '' name (see clients/README.md).
    step('createColumnFamily events (super)', function(cb) { ks.createColumnFamily('events', {column_type: 'Super', comparator_type: 'UTF8Type', subcomparator_type: 'UTF8Type', default_validation_class: 'UTF8Type', key_validation_class: 'UTF8Type'}, cb); }),
    step('createColumnFamily items', function(cb) { ks.createColumnFamily('items', {comparator_type: 'UTF8Type', default_validation_class: 'UTF8Type', key_validation_class: 'UTF8Type'}, cb); }),
    step('duplicate createColumnFamily -> InvalidRequestException', function(cb) {
      ks.createColumnFamily('users', {comparator_type: 'UTF8Type'}, expectError('InvalidRequestException', cb)); }),
    step('keyspace.get', function(cb) {
      // Re-read the keyspace definition so the column families are known.
      conn.use(ksName, guard(cb, function(k) { ks = k;
        ks.get('users', guard(cb, function(c) { users = c;
          ks.get('nums', guard(cb, function(c) { nums = c;
            ks.get('hits', guard(cb, function(c) { hits = c;
              ks.get('timeline', guard(cb, function(c) { timeline = c;
                ks.get('events', guard(cb, function(c) { events = c;
                  assert.ok(hits.isCounter, 'hits is a counter cf: ' + hits.definition.default_validation_class);
                  assert.ok(events.isSuper, 'events is a super cf: ' + events.definition.column_type);
                  cb(); })); })); })); })); })); })); }),
    // helenus has already decoded each column_metadata name with the (UTF8Type) comparator.
    step('super cf column_metadata', function(cb) {
      var md = (events.definition.column_metadata || []).map(function(c) { return [c.name, c.validation_class]; });
      if (diverges('super-internal-columns')) {
        var m = 'org.apache.cassandra.db.marshal.';
        assert.deepStrictEqual(md, [['', m + 'MapType(' + m + 'UTF8Type,' + m + 'UTF8Type)'], ['value', m + 'UTF8Type']]);
      } else {
        assert.deepStrictEqual(md, []);
      }
      cb(); }),

    step('insert', function(cb) { users.insert('alice', {state: 'UT', name: 'Alice', zip: '84001'}, {consistency: ONE}, cb); }),
    step('insert 2', function(cb) { users.insert('bob', {state: 'CA', name: 'Bob'}, cb); }),
    step('insert 3', function(cb) { users.insert('carol', {state: 'UT', name: 'Carol'}, cb); }),
    step('get', function(cb) { users.get('alice', guard(cb, function(row) {
      assert.strictEqual(row.get('name').value, 'Alice'); assert.strictEqual(row.count, 3); cb(); })); }),
    step('get start..end', function(cb) { users.get('alice', {start: 'n', end: 'zz', max: 10}, guard(cb, function(row) {
      assert.deepStrictEqual(names(row), ['name', 'state', 'zip']); cb(); })); }),
    step('get columns', function(cb) { users.get('alice', {columns: ['zip', 'nosuch', 'name']}, guard(cb, function(row) {
      assert.deepStrictEqual(names(row), ['name', 'zip']); cb(); })); }),
    // users declares state in column_metadata; name and zip are not declared.
    step('get reversed', function(cb) { users.get('alice', {reversed: true, max: 100}, guard(cb, function(row) {
      if (diverges('static-reversed')) assert.deepStrictEqual(names(row), ['state', 'zip', 'name']);
      else assert.deepStrictEqual(names(row), ['zip', 'state', 'name']);
      cb(); })); }),
    step('get reversed max 1', function(cb) { users.get('alice', {reversed: true, max: 1}, guard(cb, function(row) {
      if (diverges('static-reversed')) assert.deepStrictEqual(names(row), ['state']);
      else assert.deepStrictEqual(names(row), ['zip']);
      cb(); })); }),
    step('count', function(cb) { users.count('alice', {}, guard(cb, function(n) { assert.strictEqual(n, 3); cb(); })); }),
    step('getIndexed', function(cb) { users.getIndexed({fields: [{column: 'state', operator: 'EQ', value: 'UT'}]}, guard(cb, function(rows) {
      var got = {}; rows.forEach(function(r) { got[r.key] = names(r); });
      assert.deepStrictEqual(got, {alice: ['name', 'state', 'zip'], carol: ['name', 'state']});
      cb(); })); }),
    step('getIndexed columns without the indexed one', function(cb) {
      users.getIndexed({fields: [{column: 'state', operator: 'EQ', value: 'UT'}]}, {columns: ['name']}, guard(cb, function(rows) {
        var got = {}; rows.forEach(function(r) { got[r.key] = r.map(function(c) { return c.value; }); });
        if (diverges('index-predicate')) assert.deepStrictEqual(got, {});
        else assert.deepStrictEqual(got, {alice: ['Alice'], carol: ['Carol']});
        cb(); })); }),

    step('insert with ttl', function(cb) { users.insert('alice', {session: 's3cr3t'}, {ttl: 3}, guard(cb, function() {
      users.get('alice', {columns: ['session']}, guard(cb, function(row) {
        assert.strictEqual(row.count, 1); assert.strictEqual(row[0].value, 's3cr3t'); assertTtl(row[0].ttl, 3); cb(); })); })); }),
    step('ttl expires', function(cb) { setTimeout(function() {
      users.get('alice', guard(cb, function(row) { assert.deepStrictEqual(names(row), ['name', 'state', 'zip']); cb(); })); }, 4000); }),

    step('LongType order', function(cb) { nums.insert('r', {3: 'a', 832416: 'b', 123: 'c', 976: 'd'}, guard(cb, function() {
      nums.get('r', guard(cb, function(row) { assert.deepStrictEqual(names(row).map(String), ['3', '123', '976', '832416']); cb(); })); })); }),
    step('LongType start..end', function(cb) { nums.get('r', {start: 100, end: 1000}, guard(cb, function(row) {
      assert.deepStrictEqual(names(row).map(String), ['123', '976']); cb(); })); }),

    // Composite names are arrays; helenus packs them with the end-of-component bytes.
    step('composite insert', function(cb) {
      var cols = [['click', 3], ['view', 1], ['click', 1], ['view', 10], ['click', 20], ['buy', 5]].map(function(n) {
        return new helenus.Column(n, n[0] + '-' + n[1]); });
      timeline.insert('t1', cols, cb); }),
    step('composite order', function(cb) { timeline.get('t1', guard(cb, function(row) {
      assert.deepStrictEqual(names(row).map(function(n) { return n[0] + ':' + n[1]; }),
        ['buy:5', 'click:1', 'click:3', 'click:20', 'view:1', 'view:10']); cb(); })); }),
    step('composite prefix slice', function(cb) { timeline.get('t1', {start: ['click'], end: ['click']}, guard(cb, function(row) {
      assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['click-1', 'click-3', 'click-20']); cb(); })); }),
    step('composite bounded slice', function(cb) { timeline.get('t1', {start: ['click', 3], end: ['click', [20, false]]}, guard(cb, function(row) {
      assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['click-3']); cb(); })); }),
    step('composite exclusive start', function(cb) { timeline.get('t1', {start: [['click', false]]}, guard(cb, function(row) {
      assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['view-1', 'view-10']); cb(); })); }),
    step('composite reversed', function(cb) { timeline.get('t1', {start: ['click'], end: ['click'], reversed: true, max: 2}, guard(cb, function(row) {
      assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['click-20', 'click-3']); cb(); })); }),
    step('composite remove', function(cb) { timeline.remove('t1', ['view', 1], guard(cb, function() {
      timeline.count('t1', {}, guard(cb, function(n) { assert.strictEqual(n, 5); cb(); })); })); }),

    step('counters', function(cb) { hits.incr('page', {views: 5}, guard(cb, function() { hits.incr('page', {views: 2, clicks: 1}, guard(cb, function() {
      hits.get('page', guard(cb, function(row) {
        assert.deepStrictEqual(names(row), ['clicks', 'views']);
        assert.strictEqual(Number(row.get('views').value), 7); cb(); })); })); })); }),
    step('counters (generated client)', function(cb) {
      conn._client.get_slice('page', new T.ColumnParent({column_family: 'hits'}), full(), ONE, guard(cb, function(v) {
        assert.strictEqual(v.length, 2); assert.strictEqual(v[1].counter_column.name, 'views'); assert.strictEqual(Number(v[1].counter_column.value), 7); cb(); })); }),
    step('remove counter', function(cb) {
      conn._client.remove_counter('page', new T.ColumnPath({column_family: 'hits', column: 'clicks'}), ONE, guard(cb, function() {
        hits.count('page', {}, guard(cb, function(n) { assert.strictEqual(n, 1); cb(); })); })); }),

    // Super columns through the generated client.
    step('super columns', function(cb) {
      function sc(day, cols) { return new T.Mutation({column_or_supercolumn: new T.ColumnOrSuperColumn({super_column: new T.SuperColumn({
        name: day, columns: Object.keys(cols).map(function(k) { return new T.Column({name: k, value: cols[k], timestamp: micros()}); })})})}); }
      conn._client.batch_mutate({u1: {events: [sc('2012-01-03', {login: 'web'}), sc('2012-01-01', {login: 'mobile', logout: 'mobile'}),
        sc('2012-01-02', {login: 'web', purchase: '42'})]}}, ONE, guard(cb, function() {
        conn._client.get_slice('u1', new T.ColumnParent({column_family: 'events'}), full(), ONE, guard(cb, function(v) {
          assert.deepStrictEqual(v.map(function(c) { return c.super_column.name; }), ['2012-01-01', '2012-01-02', '2012-01-03']);
          assert.deepStrictEqual(v[0].super_column.columns.map(function(c) { return c.name; }), ['login', 'logout']);
          cb(); })); })); }),
    step('subcolumn slice', function(cb) {
      conn._client.get_slice('u1', new T.ColumnParent({column_family: 'events', super_column: '2012-01-02'}), full(), ONE, guard(cb, function(v) {
        assert.deepStrictEqual(v.map(function(c) { return c.column.name + '=' + c.column.value; }), ['login=web', 'purchase=42']); cb(); })); }),
    step('remove subcolumn', function(cb) {
      conn._client.remove('u1', new T.ColumnPath({column_family: 'events', super_column: '2012-01-01', column: 'logout'}), micros(), ONE, guard(cb, function() {
        conn._client.get('u1', new T.ColumnPath({column_family: 'events', super_column: '2012-01-01'}), ONE, guard(cb, function(c) {
          assert.deepStrictEqual(c.super_column.columns.map(function(x) { return x.name; }), ['login']); cb(); })); })); }),

    // Range scans, paged the way pycassa's get_range and Hector's iterators did.
    step('range scan paging', function(cb) {
      var rows = {}, i;
      for (i = 0; i < 25; i++) rows['item' + (100 + i)] = {items: [new T.Mutation({column_or_supercolumn: new T.ColumnOrSuperColumn({column: new T.Column({name: 'n', value: String(i), timestamp: micros()})})})]};
      conn._client.batch_mutate(rows, ONE, guard(cb, function() {
        var parent = new T.ColumnParent({column_family: 'items'});
        conn._client.get_range_slices(parent, full(), new T.KeyRange({start_key: EMPTY, end_key: EMPTY, count: 1000}), ONE, guard(cb, function(all) {
          var order = all.map(function(r) { return r.key; });
          assert.deepStrictEqual(order.slice().sort(), Object.keys(rows).sort());
          var paged = [], pages = 0;
          (function page(start) {
            conn._client.get_range_slices(parent, full(), new T.KeyRange({start_key: start, end_key: EMPTY, count: 10}), ONE, guard(cb, function(p) {
              pages++;
              (paged.length ? p.slice(1) : p).forEach(function(r) { paged.push(r.key); });
              if (p.length < 10 || pages > 20) {
                assert.deepStrictEqual(paged, order); assert.ok(pages >= 3, 'pages: ' + pages); return cb();
              }
              page(p[p.length - 1].key);
            }));
          })(EMPTY);
        }));
      })); }),

    step('remove column', function(cb) { users.remove('alice', 'zip', guard(cb, function() {
      users.count('alice', {}, guard(cb, function(n) { assert.strictEqual(n, 2); cb(); })); })); }),
    step('remove row', function(cb) { users.remove('bob', guard(cb, function() {
      users.get('bob', guard(cb, function(row) { assert.strictEqual(row.count, 0); cb(); })); })); }),
    step('get of a missing column -> NotFoundException', function(cb) {
      conn._client.get('nobody', new T.ColumnPath({column_family: 'users', column: 'name'}), ONE, expectError('NotFoundException', cb)); }),
    step('unknown column family -> InvalidRequestException', function(cb) {
      conn._client.get_slice('k', new T.ColumnParent({column_family: 'nosuch'}), full(), ONE, expectError('InvalidRequestException', cb)); }),
    // Families typed through createColumnFamily's options: LongType keys,
    // per-column validators and a named index; TimeUUID and Integer names.
    step('createColumnFamily typed (validators, LongType keys)', function(cb) {
      ks.createColumnFamily('typed', {comparator_type: 'UTF8Type', key_validation_class: 'LongType', default_validation_class: 'UTF8Type',
        gc_grace_seconds: 3600, comment: 'typed by helenus',
        columns: [{name: 'city', validation_class: 'UTF8Type', index_type: 0, index_name: 'typed_city'}, {name: 'age', validation_class: 'LongType'}]}, cb); }),
    step('createColumnFamily stamps (TimeUUIDType)', function(cb) { ks.createColumnFamily('stamps', {comparator_type: 'TimeUUIDType', default_validation_class: 'UTF8Type', key_validation_class: 'UTF8Type'}, cb); }),
    step('createColumnFamily ints (IntegerType)', function(cb) { ks.createColumnFamily('ints', {comparator_type: 'IntegerType', default_validation_class: 'UTF8Type', key_validation_class: 'UTF8Type'}, cb); }),
    step('createColumnFamily options read back', function(cb) {
      ks.get('typed', guard(cb, function(c) { typed = c;
        ks.get('stamps', guard(cb, function(c) { stamps = c;
          ks.get('ints', guard(cb, function(c) { ints = c;
            ks.get('items', guard(cb, function(c) { items = c;
              var m = 'org.apache.cassandra.db.marshal.', d = typed.definition;
              assert.deepStrictEqual([d.comparator_type, d.key_validation_class, d.default_validation_class, d.gc_grace_seconds, d.comment],
                [m + 'UTF8Type', m + 'LongType', m + 'UTF8Type', 3600, 'typed by helenus']);
              var md = d.column_metadata.map(function(x) { return [x.name, x.validation_class, x.index_type, x.index_name]; }).sort();
              assert.deepStrictEqual(md, [['age', m + 'LongType', null, null], ['city', m + 'UTF8Type', 0, 'typed_city']]);
              assert.strictEqual(stamps.definition.comparator_type, m + 'TimeUUIDType');
              assert.strictEqual(ints.definition.comparator_type, m + 'IntegerType');
              cb(); })); })); })); })); }),
    step('insert and get through validators', function(cb) {
      var rows = [[1, 'SLC', 34], [2, 'SLC', 25], [3, 'Provo', 41], [4, 'SLC', 52]];
      series(rows.map(function(r) { return function(next) {
        typed.insert(r[0], {city: r[1], age: r[2], note: 'n' + r[0]}, guard(cb, function() { next(); })); }; }), function() {
        typed.get(4, guard(cb, function(row) {
          assert.deepStrictEqual(names(row), ['age', 'city', 'note']);
          assert.strictEqual(row.get('age').value, 52); assert.strictEqual(row.get('city').value, 'SLC');
          cb(); })); }); }),
    step('value failing its LongType validator -> InvalidRequestException', function(cb) {
      var key = Buffer.from('0000000000000001', 'hex');
      conn._client.insert(key, new T.ColumnParent({column_family: 'typed'}), new T.Column({name: 'age', value: 'abc', timestamp: micros()}), ONE,
        expectError('InvalidRequestException', cb)); }),
    step('getIndexed with several expressions', function(cb) {
      typed.getIndexed({fields: [{column: 'city', operator: 'EQ', value: 'SLC'}, {column: 'age', operator: 'GTE', value: 30}]}, guard(cb, function(rows) {
        var got = rows.map(function(r) { return [r.key, r.get('age').value]; }).sort();
        assert.deepStrictEqual(got, [[1, 34], [4, 52]]);
        typed.getIndexed({fields: [{column: 'city', operator: 'EQ', value: 'SLC'}, {column: 'age', operator: 'LT', value: 34}, {column: 'note', operator: 'EQ', value: 'n2'}]}, guard(cb, function(rows) {
          assert.deepStrictEqual(rows.map(function(r) { return [r.key, names(r)]; }), [[2, ['age', 'city', 'note']]]);
          cb(); })); })); }),

    step('get start/end/reversed/max on a wide row', function(cb) {
      var cols = {}, i;
      for (i = 0; i < 20; i++) cols['c' + (i < 10 ? '0' : '') + i] = 'v' + i;
      items.insert('wide', cols, guard(cb, function() {
        items.get('wide', {start: 'c15', reversed: true, max: 4}, guard(cb, function(row) {
          assert.deepStrictEqual(names(row), ['c15', 'c14', 'c13', 'c12']);
          items.get('wide', {start: 'c05', end: 'c09', max: 3}, guard(cb, function(row) {
            assert.deepStrictEqual(names(row), ['c05', 'c06', 'c07']);
            items.get('wide', {start: 'c10', end: 'c07', reversed: true}, guard(cb, function(row) {
              assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['v10', 'v9', 'v8', 'v7']);
              items.count('wide', {start: 'c05', end: 'c09'}, guard(cb, function(n) {
                assert.strictEqual(n, 5); cb(); })); })); })); })); })); }),

    // Explicit timestamps: the higher wins whatever the order of arrival;
    // a deletion at a timestamp shadows every write at or below it.
    step('insert with explicit timestamp: an older write loses', function(cb) {
      var t0 = micros();
      items.insert('ts', [new helenus.Column('v', 'new', t0)], guard(cb, function() {
        items.insert('ts', [new helenus.Column('v', 'old', t0 - 1)], guard(cb, function() {
          items.get('ts', guard(cb, function(row) {
            assert.strictEqual(row.count, 1); assert.strictEqual(row[0].value, 'new'); assert.strictEqual(row[0].timestamp_micro, t0);
            items.insert('ts', [new helenus.Column('v', 'newer', t0 + 1)], guard(cb, function() {
              items.get('ts', guard(cb, function(row) {
                assert.strictEqual(row[0].value, 'newer'); assert.strictEqual(row[0].timestamp_micro, t0 + 1); cb(); })); })); })); })); })); }),
    step('remove column with timestamps', function(cb) {
      items.get('ts', guard(cb, function(row) {
        var t = row[0].timestamp_micro;
        items.remove('ts', 'v', {timestamp: t - 1}, guard(cb, function() {
          items.get('ts', guard(cb, function(row) {
            assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['newer']);
            items.remove('ts', 'v', {timestamp: t}, guard(cb, function() {
              items.count('ts', {}, guard(cb, function(n) {
                assert.strictEqual(n, 0);
                items.insert('ts', [new helenus.Column('v', 'late', t - 5)], guard(cb, function() {
                  items.count('ts', {}, guard(cb, function(n) { assert.strictEqual(n, 0); cb(); })); })); })); })); })); })); })); }),
    step('remove row with timestamps', function(cb) {
      var t1 = micros();
      items.insert('tr', [new helenus.Column('a', '1', t1), new helenus.Column('b', '2', t1 + 10)], guard(cb, function() {
        items.remove('tr', {timestamp: t1 - 1}, guard(cb, function() {
          items.get('tr', guard(cb, function(row) {
            assert.deepStrictEqual(names(row), ['a', 'b']);
            items.remove('tr', {timestamp: t1}, guard(cb, function() {
              items.get('tr', guard(cb, function(row) {
                assert.deepStrictEqual(names(row), ['b']);
                items.insert('tr', [new helenus.Column('c', '3', t1 + 1)], guard(cb, function() {
                  items.get('tr', guard(cb, function(row) { assert.deepStrictEqual(names(row), ['b', 'c']); cb(); })); })); })); })); })); })); })); }),

    step('counters: several columns and increments', function(cb) {
      hits.incr('many', {n: 10}, guard(cb, function() {
        hits.incr('many', {n: 3, m: 5}, guard(cb, function() {
          hits.incr('many', {m: 2}, guard(cb, function() {
            hits.get('many', guard(cb, function(row) {
              assert.deepStrictEqual(row.map(function(c) { return c.name + '=' + c.value; }), ['m=7', 'n=13']);
              conn._client.get('many', new T.ColumnPath({column_family: 'hits', column: 'm'}), ONE, guard(cb, function(c) {
                assert.strictEqual(c.counter_column.value, 7); cb(); })); })); })); })); })); }),

    step('TimeUUID names', function(cb) {
      var base = Date.UTC(2012, 0, 1), at = function(min) { return helenus.TimeUUID.fromTimestamp(new Date(base + min * 60000)); };
      var order = [3, 0, 2, 1, 4], ids = {};
      var cols = order.map(function(k) { ids[k] = at(k); return new helenus.Column(ids[k], 'm' + k); });
      stamps.insert('s1', cols, guard(cb, function() {
        stamps.get('s1', guard(cb, function(row) {
          assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['m0', 'm1', 'm2', 'm3', 'm4']);
          assert.ok(row[2].name instanceof helenus.TimeUUID, 'name is a TimeUUID');
          assert.deepStrictEqual(names(row).map(String), [0, 1, 2, 3, 4].map(function(k) { return ids[k].hex; }));
          stamps.get('s1', {start: at(0.5), end: at(3.5)}, guard(cb, function(row) {
            assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['m1', 'm2', 'm3']);
            stamps.get('s1', {start: at(3.5), end: at(0.5), reversed: true, max: 2}, guard(cb, function(row) {
              assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['m3', 'm2']); cb(); })); })); })); })); }),
    step('IntegerType names', function(cb) {
      ints.insert('i1', [1000, 7, 65536, 300].map(function(n) { return new helenus.Column(n, 'x' + n); }), guard(cb, function() {
        ints.get('i1', guard(cb, function(row) {
          assert.deepStrictEqual(names(row), [7, 300, 1000, 65536]);
          ints.get('i1', {start: 300, end: 1000}, guard(cb, function(row) {
            assert.deepStrictEqual(row.map(function(c) { return c.value; }), ['x300', 'x1000']); cb(); })); })); })); }),

    // A pool of two connections goes on answering after a request fails.
    step('ConnectionPool answers after an error', function(cb) {
      var pool = new helenus.ConnectionPool({hosts: [addr], keyspace: ksName, hostPoolSize: 2, timeout: 10000});
      var poolErr = null;
      pool.on('error', function(e) { poolErr = e; });
      function done(e) { pool.close(); cb(e || poolErr); }
      pool.connect(guard(done, function(pks) {
        pks.get('typed', guard(done, function(cf) {
          pool.execute('get_slice', 'k', new T.ColumnParent({column_family: 'nosuch'}), full(), ONE, function(e) {
            if (!e || String(e.name).indexOf('InvalidRequestException') < 0) return done(new Error('want InvalidRequestException, got ' + (e && e.name)));
            var n = 0;
            (function again() {
              cf.get(1, {columns: ['age']}, guard(done, function(row) {
                assert.strictEqual(row.get('age').value, 34);
                if (++n < 6) return again();
                assert.strictEqual(pool.clients.filter(function(c) { return c.ready; }).length, 2);
                done(); })); })();
          }); })); })); }),
    step('truncate', function(cb) { users.truncate(cb); }),
    step('get after truncate', function(cb) { users.get('alice', guard(cb, function(row) { assert.strictEqual(row.count, 0); cb(); })); }),
    step('dropColumnFamily', function(cb) { ks.dropColumnFamily('nums', cb); }),
    step('get_slice of a dropped family -> InvalidRequestException', function(cb) {
      conn._client.get_slice('r', new T.ColumnParent({column_family: 'nums'}), full(), ONE, expectError('InvalidRequestException', cb)); }),
  ], finish);
});

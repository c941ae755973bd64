// Drives thriftd with helenus 0.6.10, a Thrift-era Node.js client whose
// bindings are generated from Cassandra's own cassandra.thrift (API
// 19.35.0), unmodified. Run it with `make check-clients`.
//
// helenus predates Node 7, which removed process.EventEmitter; it also
// cannot serialise negative counter increments or decode counter rows
// itself, so counters are checked through its raw generated client.
process.EventEmitter = require("events").EventEmitter;
var helenus = require('helenus');
var assert = require('assert');
var port = process.argv[2] || '19160';
var conn = new helenus.Connection({host: '127.0.0.1:' + port, timeout: 3000});
function step(name, fn) { return function(next) { fn(function(err, v) { if (err) { console.error('FAIL', name, err); process.exit(1); } console.log('ok', name); next(v); }); }; }
function series(fns, done) { var i = 0; (function go(v) { if (i === fns.length) return done(); fns[i++](go); })(); }
conn.on('error', function(e) { console.error('conn error', e); process.exit(1); });
conn.connect(function(err) {
  if (err) { console.error('connect', err); process.exit(1); }
  var ks, cf, sup, ctr;
  series([
    step('createKeyspace', function(cb) { conn.createKeyspace('helenus_ks', cb); }),
    step('use', function(cb) { conn.use('helenus_ks', function(e, k) { ks = k; cb(e); }); }),
    step('createColumnFamily', function(cb) { ks.createColumnFamily('users', {comparator_type: 'UTF8Type', key_validation_class: 'UTF8Type', default_validation_class: 'UTF8Type',
        columns: [{name: 'state', validation_class: 'UTF8Type', index_type: 0}]}, cb); }),
    step('createColumnFamily longs', function(cb) { ks.createColumnFamily('nums', {comparator_type: 'LongType', default_validation_class: 'UTF8Type', key_validation_class: 'UTF8Type'}, cb); }),
    step('createColumnFamily counters', function(cb) { ks.createColumnFamily('hits', {comparator_type: 'UTF8Type', default_validation_class: 'CounterColumnType', key_validation_class: 'UTF8Type'}, cb); }),
    step('get cf', function(cb) { ks.get('users', function(e, c) { cf = c; cb(e); }); }),
    step('insert', function(cb) { cf.insert('alice', {state: 'UT', name: 'Alice', zip: '84001'}, {consistency: helenus.ConsistencyLevel.ONE}, cb); }),
    step('insert 2', function(cb) { cf.insert('bob', {state: 'CA', name: 'Bob'}, cb); }),
    step('insert 3', function(cb) { cf.insert('carol', {state: 'UT', name: 'Carol'}, cb); }),
    step('get', function(cb) { cf.get('alice', function(e, row) { if (e) return cb(e); assert.strictEqual(row.get('name').value, 'Alice'); assert.strictEqual(row.count, 3); assert.deepStrictEqual(row.nameSlice ? null : null, null); cb(); }); }),
    step('get range', function(cb) { cf.get('alice', {start: 'n', end: 'zz', max: 10}, function(e, row) { if (e) return cb(e); assert.strictEqual(row.count, 3); assert.strictEqual(row[0].name, 'name'); assert.strictEqual(row[2].name, 'zip'); cb(); }); }),
    step('get reversed', function(cb) { cf.get('alice', {reversed: true, max: 1}, function(e, row) { if (e) return cb(e); assert.strictEqual(row.count, 1); assert.strictEqual(row[0].name, 'zip'); cb(); }); }),
    step('count', function(cb) { cf.count('alice', {}, function(e, n) { if (e) return cb(e); assert.strictEqual(n, 3); cb(); }); }),
    step('getIndexed', function(cb) { cf.getIndexed({fields: [{column: 'state', operator: 'EQ', value: 'UT'}]}, function(e, rows) { if (e) return cb(e); var keys = rows.map(function(r) { return r.key; }).sort(); assert.deepStrictEqual(keys, ['alice', 'carol']); cb(); }); }),
    step('remove column', function(cb) { cf.remove('alice', 'zip', cb); }),
    step('count after remove', function(cb) { cf.count('alice', {}, function(e, n) { if (e) return cb(e); assert.strictEqual(n, 2); cb(); }); }),
    step('remove row', function(cb) { cf.remove('bob', cb); }),
    step('get removed row', function(cb) { cf.get('bob', function(e, row) { if (e) return cb(e); assert.strictEqual(row.count, 0); cb(); }); }),
    step('longs order', function(cb) { ks.get('nums', function(e, n) { if (e) return cb(e); n.insert('r', {3: 'a', 832416: 'b', 123: 'c', 976: 'd'}, function(e) { if (e) return cb(e);
        n.get('r', function(e, row) { if (e) return cb(e); var names = []; for (var i = 0; i < row.count; i++) names.push(String(row[i].name)); assert.deepStrictEqual(names, ['3', '123', '976', '832416']); cb(); }); }); }); }),
    step('counters', function(cb) { ks.get('hits', function(e, h) { if (e) return cb(e); h.incr('page', {views: 5}, function(e) { if (e) return cb(e); h.incr('page', {views: 2}, function(e) { if (e) return cb(e);
        var T = require('helenus/lib/cassandra/cassandra_types');
        conn._client.get_slice('page', new T.ColumnParent({column_family: 'hits'}), new T.SlicePredicate({slice_range: new T.SliceRange({start: '', finish: '', reversed: false, count: 100})}), T.ConsistencyLevel.ONE,
          function(e, v) { if (e) return cb(e); assert.strictEqual(v.length, 1); assert.strictEqual(v[0].counter_column.name, 'views'); assert.strictEqual(Number(v[0].counter_column.value), 7); cb(); }); }); }); }); }),
    step('truncate', function(cb) { cf.truncate(cb); }),
    step('get after truncate', function(cb) { cf.get('alice', function(e, row) { if (e) return cb(e); assert.strictEqual(row.count, 0); cb(); }); }),
    step('dropColumnFamily', function(cb) { ks.dropColumnFamily('nums', cb); }),
    step('dropKeyspace', function(cb) { conn.dropKeyspace('helenus_ks', cb); }),
  ], function() { console.log('ALL OK'); conn.close(); process.exit(0); });
});

package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
)

// Paths of the metrics endpoint (metrics_listen).
const (
	MetricsPath = "/metrics"
	HealthPath  = "/healthz"
)

// Bounds of the metrics endpoint's work.
const (
	metricsReadHeaderTimeout = 10 * time.Second
	healthCheckTimeout       = 5 * time.Second
)

// unknownMethod is the method label of the calls of a name the IDL does
// not have, so that a client cannot make up label values.
const unknownMethod = "unknown"

// requestDurationBuckets are the upper bounds, in seconds, of the request
// latency histogram: from 100µs, where the fast calls of a local store
// answer, to the 10 s of range_request_timeout_in_ms.
var requestDurationBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// metrics are a daemon's Prometheus metrics, in a registry of its own (so
// that daemons in one process do not share or collide), and the HTTP
// endpoint that serves them with the health check. They implement
// legacy.Observer and legacy.StorageObserver. A nil *metrics (no
// metrics_listen) observes nothing and costs nothing.
type metrics struct {
	registry *prometheus.Registry

	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// unknown counts the calls of names the IDL does not have.
	unknown *methodMetrics

	connectionsOpen  prometheus.Gauge
	connectionsTotal prometheus.Counter
	refused          map[legacy.Refusal]prometheus.Counter
	bytesReceived    prometheus.Counter
	bytesSent        prometheus.Counter
	storageErrors    map[legacy.StorageFailure]prometheus.Counter

	// stopping is set when Stop begins: /healthz answers 503 from then.
	stopping atomic.Bool
	// server serves the endpoint, once serveMetrics ran; served is closed
	// when it has stopped.
	server   *http.Server
	listener net.Listener
	served   chan struct{}
}

var (
	_ legacy.Observer        = (*metrics)(nil)
	_ legacy.StorageObserver = (*metrics)(nil)
)

// newMetrics makes the metrics of a daemon serving engine, or returns nil
// when cfg asks for none. It registers the Go runtime and process
// collectors and, for a Badger store, the storage sizes, read at scrape
// time.
func newMetrics(cfg Config, engine any, logger *slog.Logger) *metrics {
	if cfg.MetricsListen == "" {
		return nil
	}
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "thriftd_requests_total",
			Help: "Thrift calls answered, by method of the IDL (unknown: a name the IDL does not have).",
		}, []string{"method"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "thriftd_request_errors_total",
			Help: "Thrift calls answered with an exception, by method and exception.",
		}, []string{"method", "exception"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "thriftd_request_duration_seconds",
			Help:    "Time to read, answer and write a Thrift call, by method.",
			Buckets: requestDurationBuckets,
		}, []string{"method"}),
		connectionsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "thriftd_connections_open",
			Help: "Thrift client connections being served.",
		}),
		connectionsTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "thriftd_connections_total",
			Help: "Thrift client connections admitted since the start.",
		}),
		bytesReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "thriftd_bytes_received_total",
			Help: "Bytes of the Thrift request frames read, length prefixes included.",
		}),
		bytesSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "thriftd_bytes_sent_total",
			Help: "Bytes of the Thrift reply frames written, length prefixes included.",
		}),
	}
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "thriftd_connections_refused_total",
		Help: "Thrift connections closed without being served, by reason: max_connections, shutting_down, tls_handshake.",
	}, []string{"reason"})
	m.refused = make(map[legacy.Refusal]prometheus.Counter, len(legacy.Refusals))
	for _, r := range legacy.Refusals {
		m.refused[r] = refused.WithLabelValues(string(r))
	}
	storageErrors := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "thriftd_storage_errors_total",
		Help: "Storage engine failures met by requests, by kind: timeout (the engine gave up), failure (any other, logged).",
	}, []string{"kind"})
	m.storageErrors = make(map[legacy.StorageFailure]prometheus.Counter, len(legacy.StorageFailures))
	for _, k := range legacy.StorageFailures {
		m.storageErrors[k] = storageErrors.WithLabelValues(string(k))
	}
	m.unknown = m.method(unknownMethod)

	m.registry.MustRegister(
		m.requests, m.errors, m.duration,
		m.connectionsOpen, m.connectionsTotal, refused,
		m.bytesReceived, m.bytesSent, storageErrors,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if local, ok := engine.(*badgerstore.Engine); ok {
		m.registry.MustRegister(newBadgerCollector(local, logger))
	}
	return m
}

// observer is m as the server's observer: nil, not a nil *metrics, when
// there are no metrics, so that the server skips the calls.
func (m *metrics) observer() legacy.Observer {
	if m == nil {
		return nil
	}
	return m
}

// storageObserver is m as the handler's storage observer, nil when there
// are no metrics.
func (m *metrics) storageObserver() legacy.StorageObserver {
	if m == nil {
		return nil
	}
	return m
}

// methodMetrics are the series of one method, found once.
type methodMetrics struct {
	requests prometheus.Counter
	duration prometheus.Observer
	// errors are indexed by legacy.Outcome (none for legacy.Answered).
	errors [legacy.NumOutcomes]prometheus.Counter
}

// method finds the series of a method, every exception's included, so
// that the rate of an exception is known from the start.
func (m *metrics) method(name string) *methodMetrics {
	mm := &methodMetrics{
		requests: m.requests.WithLabelValues(name),
		duration: m.duration.WithLabelValues(name),
	}
	for o := legacy.Answered + 1; int(o) < legacy.NumOutcomes; o++ {
		mm.errors[o] = m.errors.WithLabelValues(name, o.Exception())
	}
	return mm
}

// Method implements legacy.Observer.
func (m *metrics) Method(name string) legacy.MethodObserver { return m.method(name) }

// Call implements legacy.MethodObserver.
func (mm *methodMetrics) Call(elapsed time.Duration, outcome legacy.Outcome) {
	mm.requests.Inc()
	mm.duration.Observe(elapsed.Seconds())
	if outcome != legacy.Answered {
		mm.errors[outcome].Inc()
	}
}

// UnknownMethod implements legacy.Observer: counted, with no duration
// (the processor refuses the call before a method is timed).
func (m *metrics) UnknownMethod() {
	m.unknown.requests.Inc()
	m.unknown.errors[legacy.ApplicationError].Inc()
}

// ConnectionOpened implements legacy.Observer.
func (m *metrics) ConnectionOpened() {
	m.connectionsOpen.Inc()
	m.connectionsTotal.Inc()
}

// ConnectionClosed implements legacy.Observer.
func (m *metrics) ConnectionClosed() { m.connectionsOpen.Dec() }

// ConnectionRefused implements legacy.Observer.
func (m *metrics) ConnectionRefused(reason legacy.Refusal) { m.refused[reason].Inc() }

// BytesReceived implements legacy.Observer.
func (m *metrics) BytesReceived(n int) { m.bytesReceived.Add(float64(n)) }

// BytesSent implements legacy.Observer.
func (m *metrics) BytesSent(n int) { m.bytesSent.Add(float64(n)) }

// StorageFailure implements legacy.StorageObserver.
func (m *metrics) StorageFailure(kind legacy.StorageFailure) { m.storageErrors[kind].Inc() }

// badgerCollector reads a Badger store's sizes when scraped.
type badgerCollector struct {
	engine                 *badgerstore.Engine
	log                    *slog.Logger
	lsm, vlog              *prometheus.Desc
	levelBytes, levelTable *prometheus.Desc
	groupWrites            *prometheus.Desc
	deferredWrites         *prometheus.Desc
	deferredPending        *prometheus.Desc
	readSnapshots          *prometheus.Desc
	counterCache           *prometheus.Desc
	counterCacheBytes      *prometheus.Desc
	counterFilterSkips     *prometheus.Desc
	counterFilterBytes     *prometheus.Desc
	packCache              *prometheus.Desc
	packCacheBytes         *prometheus.Desc
	cellCache              *prometheus.Desc
	cellCacheBytes         *prometheus.Desc
	rowImage               *prometheus.Desc
	markFilterSkips        *prometheus.Desc
	markFilterBytes        *prometheus.Desc
	allocatorsReleased     *prometheus.Desc
	diskFree, diskReserve  *prometheus.Desc
}

func newBadgerCollector(engine *badgerstore.Engine, logger *slog.Logger) *badgerCollector {
	return &badgerCollector{
		engine: engine,
		log:    logger,
		lsm: prometheus.NewDesc("thriftd_badger_lsm_bytes",
			"Size of the Badger store's LSM tree tables, every level.", nil, nil),
		vlog: prometheus.NewDesc("thriftd_badger_vlog_bytes",
			"Disk space of the Badger store's value log files (values too large for the LSM tree).", nil, nil),
		levelBytes: prometheus.NewDesc("thriftd_badger_level_bytes",
			"Size of the tables of one level of the Badger store's LSM tree.", []string{"level"}, nil),
		levelTable: prometheus.NewDesc("thriftd_badger_level_tables",
			"Tables of one level of the Badger store's LSM tree.", []string{"level"}, nil),
		groupWrites: prometheus.NewDesc("thriftd_badger_group_commit_writes_total",
			"Writes queued behind a committing transaction, by outcome: shared (committed in one transaction with the others queued) or alone_after_failure (their group failed, so each applied alone).",
			[]string{"outcome"}, nil),
		deferredWrites: prometheus.NewDesc("thriftd_badger_deferred_writes_total",
			"Writes acknowledged before the store applied them, by outcome: acknowledged (every one), dropped (the store refused to apply it for good; logged as an error).",
			[]string{"outcome"}, nil),
		deferredPending: prometheus.NewDesc("thriftd_badger_deferred_writes_pending",
			"Acknowledged writes the store has not applied yet.", nil, nil),
		readSnapshots: prometheus.NewDesc("thriftd_badger_read_snapshots_total",
			"Reads (get, get_slice, counts, range and index scans) by their Badger transaction: shared (the snapshot another read opened, nothing written since) or opened (one of their own).",
			[]string{"snapshot"}, nil),
		counterCache: prometheus.NewDesc("thriftd_badger_counter_cache_requests_total",
			"Counter adds by whether the counter cache knew their counter's value (hit) or the store was read (miss).",
			[]string{"result"}, nil),
		counterCacheBytes: prometheus.NewDesc("thriftd_badger_counter_cache_bytes",
			"Memory of the counter cache: its entries, their keys and its index, as allocated.", nil, nil),
		counterFilterSkips: prometheus.NewDesc("thriftd_badger_counter_filter_skipped_reads_total",
			"Counter adds the counter cache did not know that read nothing: the counter filter vouched that their counter was never written.", nil, nil),
		counterFilterBytes: prometheus.NewDesc("thriftd_badger_counter_filter_bytes",
			"Memory of the counter filters: the keys each counter family may hold.", nil, nil),
		packCache: prometheus.NewDesc("thriftd_badger_pack_cache_requests_total",
			"Reads of super columns' packs by writes into them, by whether the pack cache knew the pack (hit) or not (miss).",
			[]string{"result"}, nil),
		packCacheBytes: prometheus.NewDesc("thriftd_badger_pack_cache_bytes",
			"Memory of the pack cache: its entries, their keys and values and its index, as allocated.", nil, nil),
		cellCache: prometheus.NewDesc("thriftd_badger_cell_cache_requests_total",
			"Reads of one named cell of a standard family, by whether the cell cache answered (hit) or the store was read (miss).",
			[]string{"result"}, nil),
		cellCacheBytes: prometheus.NewDesc("thriftd_badger_cell_cache_bytes",
			"Memory of the cell cache: its entries, their keys and values and its index, as allocated.", nil, nil),
		rowImage: prometheus.NewDesc("thriftd_badger_row_image_requests_total",
			"Reads of a standard row, once a slice of its family took the image of a row, by whether the cell cache answered with the row's image (hit) or not (miss).",
			[]string{"result"}, nil),
		markFilterSkips: prometheus.NewDesc("thriftd_badger_row_mark_filter_skipped_reads_total",
			"Reads of a super family row's mark, or of its packs, that writes into the row did not make: the row mark filter vouched that the row has no pack.", nil, nil),
		markFilterBytes: prometheus.NewDesc("thriftd_badger_row_mark_filter_bytes",
			"Memory of the row mark filters: the rows of each packed super family that may have packs.", nil, nil),
		allocatorsReleased: prometheus.NewDesc("thriftd_badger_idle_allocator_bytes_released_total",
			"Bytes of the idle buffers of Badger's table builders that the store released, rather than leave them pooled.", nil, nil),
		diskFree: prometheus.NewDesc("thriftd_badger_disk_free_bytes",
			"Free space of the file system of the Badger store's data directory.", nil, nil),
		diskReserve: prometheus.NewDesc("thriftd_badger_disk_reserve_bytes",
			"Free space below which the Badger store refuses writes: room for its flushes, a value log file and its compactions.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *badgerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lsm
	ch <- c.vlog
	ch <- c.levelBytes
	ch <- c.levelTable
	ch <- c.groupWrites
	ch <- c.deferredWrites
	ch <- c.deferredPending
	ch <- c.readSnapshots
	ch <- c.counterCache
	ch <- c.counterCacheBytes
	ch <- c.counterFilterSkips
	ch <- c.counterFilterBytes
	ch <- c.packCache
	ch <- c.packCacheBytes
	ch <- c.cellCache
	ch <- c.cellCacheBytes
	ch <- c.rowImage
	ch <- c.markFilterSkips
	ch <- c.markFilterBytes
	ch <- c.allocatorsReleased
	ch <- c.diskFree
	ch <- c.diskReserve
}

// Collect implements prometheus.Collector. A store that cannot tell its
// sizes is logged and leaves them out of the scrape; the other metrics
// are served.
func (c *badgerCollector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.engine.Stats()
	if err != nil {
		c.log.Warn("metrics: cannot read the Badger store's sizes", "err", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.lsm, prometheus.GaugeValue, float64(st.LSMBytes))
	ch <- prometheus.MustNewConstMetric(c.vlog, prometheus.GaugeValue, float64(st.VlogBytes))
	ch <- prometheus.MustNewConstMetric(c.groupWrites, prometheus.CounterValue, float64(st.GroupedWrites), "shared")
	ch <- prometheus.MustNewConstMetric(c.groupWrites, prometheus.CounterValue, float64(st.AloneAfterGroup), "alone_after_failure")
	ch <- prometheus.MustNewConstMetric(c.deferredWrites, prometheus.CounterValue, float64(st.DeferredWrites), "acknowledged")
	ch <- prometheus.MustNewConstMetric(c.deferredWrites, prometheus.CounterValue, float64(st.DeferredDropped), "dropped")
	ch <- prometheus.MustNewConstMetric(c.deferredPending, prometheus.GaugeValue, float64(st.DeferredPending))
	ch <- prometheus.MustNewConstMetric(c.readSnapshots, prometheus.CounterValue, float64(st.SharedReads), "shared")
	ch <- prometheus.MustNewConstMetric(c.readSnapshots, prometheus.CounterValue, float64(st.OwnReads), "opened")
	ch <- prometheus.MustNewConstMetric(c.counterCache, prometheus.CounterValue, float64(st.CounterCacheHits), "hit")
	ch <- prometheus.MustNewConstMetric(c.counterCache, prometheus.CounterValue, float64(st.CounterCacheMisses), "miss")
	ch <- prometheus.MustNewConstMetric(c.counterCacheBytes, prometheus.GaugeValue, float64(st.CounterCacheBytes))
	ch <- prometheus.MustNewConstMetric(c.counterFilterSkips, prometheus.CounterValue, float64(st.CounterFilterSkips))
	ch <- prometheus.MustNewConstMetric(c.counterFilterBytes, prometheus.GaugeValue, float64(st.CounterFilterBytes))
	ch <- prometheus.MustNewConstMetric(c.packCache, prometheus.CounterValue, float64(st.PackCacheHits), "hit")
	ch <- prometheus.MustNewConstMetric(c.packCache, prometheus.CounterValue, float64(st.PackCacheMisses), "miss")
	ch <- prometheus.MustNewConstMetric(c.packCacheBytes, prometheus.GaugeValue, float64(st.PackCacheBytes))
	ch <- prometheus.MustNewConstMetric(c.cellCache, prometheus.CounterValue, float64(st.CellCacheHits), "hit")
	ch <- prometheus.MustNewConstMetric(c.cellCache, prometheus.CounterValue, float64(st.CellCacheMisses), "miss")
	ch <- prometheus.MustNewConstMetric(c.cellCacheBytes, prometheus.GaugeValue, float64(st.CellCacheBytes))
	ch <- prometheus.MustNewConstMetric(c.rowImage, prometheus.CounterValue, float64(st.RowImageHits), "hit")
	ch <- prometheus.MustNewConstMetric(c.rowImage, prometheus.CounterValue, float64(st.RowImageMisses), "miss")
	ch <- prometheus.MustNewConstMetric(c.markFilterSkips, prometheus.CounterValue, float64(st.MarkFilterSkips))
	ch <- prometheus.MustNewConstMetric(c.markFilterBytes, prometheus.GaugeValue, float64(st.MarkFilterBytes))
	ch <- prometheus.MustNewConstMetric(c.allocatorsReleased, prometheus.CounterValue, float64(st.AllocatorBytesReleased))
	if st.DiskReserveBytes > 0 { // a store on disk
		ch <- prometheus.MustNewConstMetric(c.diskFree, prometheus.GaugeValue, float64(st.DiskFreeBytes))
		ch <- prometheus.MustNewConstMetric(c.diskReserve, prometheus.GaugeValue, float64(st.DiskReserveBytes))
	}
	for _, l := range st.Levels {
		level := strconv.Itoa(l.Level)
		ch <- prometheus.MustNewConstMetric(c.levelBytes, prometheus.GaugeValue, float64(l.Bytes), level)
		ch <- prometheus.MustNewConstMetric(c.levelTable, prometheus.GaugeValue, float64(l.Tables), level)
	}
}

// serveMetrics starts the daemon's metrics endpoint on cfg.MetricsListen,
// if it has metrics: /metrics and /healthz.
func (d *Daemon) serveMetrics(cfg Config, m *metrics, logger *slog.Logger) error {
	d.metrics = m
	if m == nil {
		return nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", cfg.MetricsListen)
	if err != nil {
		return fmt.Errorf("metrics endpoint: listen on %s: %w", cfg.MetricsListen, err)
	}
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.registry,
	}))
	mux.HandleFunc(HealthPath, d.serveHealth)
	m.listener = ln
	m.served = make(chan struct{})
	m.server = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: metricsReadHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(m.served)
		if err := m.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics endpoint stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	logger.Info("metrics endpoint listening", "addr", ln.Addr().String(), "metrics", MetricsPath, "health", HealthPath)
	return nil
}

// MetricsAddr is where the metrics endpoint listens, or nil without one
// (metrics_listen empty).
func (d *Daemon) MetricsAddr() net.Addr {
	if d.metrics == nil || d.metrics.listener == nil {
		return nil
	}
	return d.metrics.listener.Addr()
}

// beginStop makes /healthz answer 503 from now on.
func (m *metrics) beginStop() {
	if m != nil {
		m.stopping.Store(true)
	}
}

// shutdown stops the endpoint, letting the scrapes in progress finish
// until ctx ends.
func (m *metrics) shutdown(ctx context.Context) error {
	if m == nil || m.server == nil {
		return nil
	}
	err := m.server.Shutdown(ctx)
	<-m.served
	if err != nil {
		return fmt.Errorf("metrics endpoint: shutdown: %w", err)
	}
	return nil
}

// serveHealth answers /healthz: 200 "ok" when the daemon is healthy, 503
// with the reason otherwise.
func (d *Daemon) serveHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), healthCheckTimeout)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := d.health(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintln(w, err)
		return
	}
	_, _ = fmt.Fprintln(w, "ok")
}

// healthChecker is an engine that can tell cheaply whether it answers.
type healthChecker interface {
	Check(ctx context.Context) error
}

// health reports why the daemon is not healthy: it is stopping, its
// Thrift server does not accept connections, or its engine does not
// answer (for an engine that can tell: healthChecker).
func (d *Daemon) health(ctx context.Context) error {
	if d.metrics.stopping.Load() {
		return errors.New("stopping")
	}
	select {
	case <-d.done:
		if d.served != nil {
			return fmt.Errorf("the Thrift server stopped: %w", d.served)
		}
		return errors.New("the Thrift server stopped")
	default:
	}
	if !d.server.Accepting() {
		return errors.New("the Thrift server does not accept connections")
	}
	if c, ok := any(d.engine).(healthChecker); ok {
		if err := c.Check(ctx); err != nil {
			return fmt.Errorf("storage engine: %w", err)
		}
	}
	return nil
}

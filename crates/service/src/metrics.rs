//! What an operator's Prometheus scrapes from `GET /metrics`: requests and their latency,
//! reports stored, the priority computation's time and how old the latest cycle is.

use prometheus::{
    Encoder, Gauge, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    Opts, Registry, TextEncoder,
};

/// Latency buckets in seconds, fine where the service's targets lie (milliseconds).
const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// The daemon's metrics, registered once.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    /// Requests by method, route and status.
    pub requests: IntCounterVec,
    /// Request latency by method and route.
    pub latency: HistogramVec,
    /// Usage reports stored (duplicates not counted).
    pub reports_stored: IntCounter,
    /// Samples in the reports stored.
    pub samples_stored: IntCounter,
    /// Reports acknowledged as duplicates of stored ones.
    pub reports_duplicate: IntCounter,
    /// Requests refused by the per-token rate limit.
    pub rate_limited: IntCounter,
    /// Time to compute one cycle's priorities.
    pub cycle_seconds: Histogram,
    /// Cycles that failed.
    pub cycle_errors: IntCounter,
    /// Seconds since the latest cycle was computed (by any replica).
    pub last_cycle_age: Gauge,
    /// The latest cycle's number.
    pub cycle: IntGauge,
    /// 1 while this replica computes priorities.
    pub leader: IntGauge,
    /// Connections open now.
    pub connections_open: IntGauge,
    /// Connections closed at once: their peer held `limits.max_connections_per_peer`, or every
    /// slot was held by a connection that had shown a token.
    pub connections_refused: IntCounter,
    /// Connections without a token closed to make room for a new one at the cap.
    pub connections_evicted: IntCounter,
}

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("fairshare_http_requests_total", "HTTP requests answered"),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "fairshare_http_request_duration_seconds",
                "Time to answer an HTTP request",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["method", "route"],
        )
        .expect("valid metric");
        let counter = |name: &str, help: &str| IntCounter::new(name, help).expect("valid metric");
        let cycle_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "fairshare_priority_computation_seconds",
                "Time to compute one cycle's heaviness and priorities",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
        )
        .expect("valid metric");
        let metrics = Metrics {
            requests,
            latency,
            reports_stored: counter(
                "fairshare_usage_reports_stored_total",
                "Usage reports stored",
            ),
            samples_stored: counter(
                "fairshare_usage_samples_stored_total",
                "Samples in the usage reports stored",
            ),
            reports_duplicate: counter(
                "fairshare_usage_reports_duplicate_total",
                "Usage reports acknowledged as duplicates and not counted again",
            ),
            rate_limited: counter(
                "fairshare_rate_limited_total",
                "Requests refused by the per-token rate limit",
            ),
            cycle_seconds,
            cycle_errors: counter(
                "fairshare_cycle_errors_total",
                "Priority cycles that failed",
            ),
            last_cycle_age: Gauge::new(
                "fairshare_last_cycle_age_seconds",
                "Seconds since the latest priority cycle",
            )
            .expect("valid metric"),
            cycle: IntGauge::new("fairshare_cycle", "The latest priority cycle's number")
                .expect("valid metric"),
            leader: IntGauge::new(
                "fairshare_leader",
                "1 while this replica computes priorities",
            )
            .expect("valid metric"),
            connections_open: IntGauge::new(
                "fairshare_connections_open",
                "Client connections open now",
            )
            .expect("valid metric"),
            connections_refused: counter(
                "fairshare_connections_refused_total",
                "Connections closed at once: their peer was at limits.max_connections_per_peer, \
                 or every slot was held by a connection that had shown a token",
            ),
            connections_evicted: counter(
                "fairshare_connections_evicted_total",
                "Connections without a token closed to make room for a new one at limits.max_connections",
            ),
            registry,
        };
        metrics.register_all();
        metrics
    }

    fn register_all(&self) {
        let all: Vec<Box<dyn prometheus::core::Collector>> = vec![
            Box::new(self.requests.clone()),
            Box::new(self.latency.clone()),
            Box::new(self.reports_stored.clone()),
            Box::new(self.samples_stored.clone()),
            Box::new(self.reports_duplicate.clone()),
            Box::new(self.rate_limited.clone()),
            Box::new(self.cycle_seconds.clone()),
            Box::new(self.cycle_errors.clone()),
            Box::new(self.last_cycle_age.clone()),
            Box::new(self.cycle.clone()),
            Box::new(self.leader.clone()),
            Box::new(self.connections_open.clone()),
            Box::new(self.connections_refused.clone()),
            Box::new(self.connections_evicted.clone()),
        ];
        for c in all {
            self.registry
                .register(c)
                .expect("each metric registered once");
        }
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("text encoding cannot fail");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

// `nestjs-zk-lock/metrics`: lock metrics from LockService's events, with no metrics library needed.
export { LockMetrics, DEFAULT_SECONDS_BUCKETS, PROMETHEUS_CONTENT_TYPE } from './lock-metrics.js';
export type { LockMetricsOptions, LockMetricsSnapshot, LockMetricsSource, SessionGaugeState } from './lock-metrics.js';
export type { HistogramSnapshot } from './metric-series.js';

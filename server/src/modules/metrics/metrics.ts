import { Counter, Gauge, Histogram, collectDefaultMetrics, register } from 'prom-client';

/**
 * The service's Prometheus metrics (issue 15), on prom-client's default registry beside the connect gateway's
 * (modules/connect/metrics.ts), served by GET /metrics (./routes.ts). Named per Prometheus conventions: `hyperdesk_`
 * prefix, base units in the name (`_seconds`, `_minutes`), `_total` on counters. Created once per process (several
 * apps in one test process share them; prom-client refuses a second metric of the same name).
 */
export function once<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

if (!register.getSingleMetric('hyperdesk_process_cpu_seconds_total')) collectDefaultMetrics({ prefix: 'hyperdesk_' });

export const machineStartSeconds = once(
  'hyperdesk_machine_start_seconds',
  () =>
    new Histogram({
      name: 'hyperdesk_machine_start_seconds',
      help: 'Time from a start request (processing) to the desktop answering (online)',
      buckets: [0.5, 1, 2, 3, 5, 8, 13, 20, 30, 45, 60, 90, 120],
    }),
);

export const machineStopSeconds = once(
  'hyperdesk_machine_stop_seconds',
  () =>
    new Histogram({
      name: 'hyperdesk_machine_stop_seconds',
      help: 'Time the reconciler took to stop a desktop and mark its machine offline',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 60],
    }),
);

export const reconcilerErrors = once(
  'hyperdesk_reconciler_errors_total',
  () =>
    new Counter({
      name: 'hyperdesk_reconciler_errors_total',
      help: 'Reconciler failures: a machine step that threw (retried next pass), a whole pass, or a start that failed for good',
      labelNames: ['kind'] as const,
    }),
);

export const debitedMinutes = once(
  'hyperdesk_ledger_debited_minutes_total',
  () => new Counter({ name: 'hyperdesk_ledger_debited_minutes_total', help: 'Runtime minutes debited from the hours ledger (metering)' }),
);

export const webhookDeliveries = once(
  'hyperdesk_webhook_deliveries_total',
  () =>
    new Counter({
      name: 'hyperdesk_webhook_deliveries_total',
      help: 'Outgoing payment webhook delivery attempts of the built-in provider, by outcome',
      labelNames: ['provider', 'outcome'] as const,
    }),
);

export const webhookRetries = once(
  'hyperdesk_webhook_delivery_retries_total',
  () =>
    new Counter({
      name: 'hyperdesk_webhook_delivery_retries_total',
      help: 'Payment webhook deliveries that failed and were scheduled again with backoff',
      labelNames: ['provider'] as const,
    }),
);

export const httpSeconds = once(
  'hyperdesk_http_request_duration_seconds',
  () =>
    new Histogram({
      name: 'hyperdesk_http_request_duration_seconds',
      help: 'HTTP request latency by route pattern (not the raw URL), method and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
);

/** A host machines run on, as the scrape-time host gauges read it from the machine provider. */
export interface HostFigures {
  name: string;
  online: boolean;
  storageUsed: number | null;
  storageTotal: number | null;
}

/** Where the scrape-time gauges read the database (the last app built in this process; null after it closed). */
export interface GaugeSource {
  machinesByState(): Promise<{ observed: string; desired: string; n: number }[]>;
  ordersByStatus(): Promise<{ status: string; n: number }[]>;
  /** The provider's hosts (none where it does not report them). */
  hosts(): Promise<HostFigures[]>;
}
let source: GaugeSource | null = null;
export function setGaugeSource(s: GaugeSource): () => void {
  source = s;
  return () => {
    if (source === s) source = null;
  };
}

export const machinesGauge = once(
  'hyperdesk_machines',
  () =>
    new Gauge({
      name: 'hyperdesk_machines',
      help: 'Machines by observed and desired state (read from the database at scrape time)',
      labelNames: ['observed', 'desired'] as const,
      async collect() {
        this.reset();
        if (!source) return;
        // A database hiccup leaves the family empty for this scrape instead of failing the whole scrape.
        const rows = await source.machinesByState().catch(() => null);
        if (!rows) return;
        for (const observed of ['offline', 'processing', 'online']) for (const desired of ['running', 'stopped']) this.set({ observed, desired }, 0);
        for (const r of rows) this.set({ observed: r.observed, desired: r.desired }, r.n);
      },
    }),
);

export const ordersGauge = once(
  'hyperdesk_orders',
  () =>
    new Gauge({
      name: 'hyperdesk_orders',
      help: 'Orders by status (read from the database at scrape time)',
      labelNames: ['status'] as const,
      async collect() {
        this.reset();
        if (!source) return;
        const rows = await source.ordersByStatus().catch(() => null);
        if (!rows) return;
        for (const status of ['pending', 'paid', 'failed', 'expired']) this.set({ status }, 0);
        for (const r of rows) this.set({ status: r.status }, r.n);
      },
    }),
);

/**
 * The hosts as one scrape reads them: the registry collects every family at once, so the three host families share
 * the read in flight (a few engine calls per host); an engine that does not answer leaves them empty for this scrape.
 */
let hostRead: Promise<HostFigures[] | null> | null = null;
function hostsNow(): Promise<HostFigures[] | null> {
  if (!source) return Promise.resolve(null);
  return (hostRead ??= source
    .hosts()
    .catch(() => null)
    .finally(() => {
      hostRead = null;
    }));
}

function hostGauge(name: string, help: string, value: (h: HostFigures) => number | null) {
  return once(
    name,
    () =>
      new Gauge({
        name,
        help,
        labelNames: ['host'] as const,
        async collect() {
          this.reset();
          for (const h of (await hostsNow()) ?? []) {
            const v = value(h);
            if (v !== null) this.set({ host: h.name }, v);
          }
        },
      }),
  );
}

export const hostUp = hostGauge('hyperdesk_host_up', 'Whether a host machines run on is online (1) or not (0), as the machine provider reports it', (h) => (h.online ? 1 : 0));
export const hostStorageUsed = hostGauge(
  'hyperdesk_host_storage_used_bytes',
  "Bytes in use in the desktops' storage pool on a host (their roots and homes: every home's quota draws on it)",
  (h) => h.storageUsed,
);
export const hostStorageSize = hostGauge('hyperdesk_host_storage_size_bytes', "Size of the desktops' storage pool on a host", (h) => h.storageTotal);

export { register as metricsRegistry };

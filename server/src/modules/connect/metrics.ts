import { Counter, Gauge, register } from 'prom-client';

/**
 * Gateway metrics on prom-client's default registry (served by GET /metrics). Created once per process: several
 * apps in one process (tests) share them, as prom-client refuses a second metric with the same name.
 */
function once<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

export const openSessions = once(
  'hyperdesk_connect_sessions_open',
  () => new Gauge({ name: 'hyperdesk_connect_sessions_open', help: 'Desktop sessions open through the connect gateway' }),
);

export const bytesRelayed = once(
  'hyperdesk_connect_bytes_relayed_total',
  () =>
    new Counter({
      name: 'hyperdesk_connect_bytes_relayed_total',
      help: 'Bytes relayed by the connect gateway',
      labelNames: ['direction'] as const,
    }),
);

export const sessionsClosed = once(
  'hyperdesk_connect_sessions_closed_total',
  () =>
    new Counter({
      name: 'hyperdesk_connect_sessions_closed_total',
      help: 'Gateway sessions ended, by why they ended',
      labelNames: ['reason'] as const,
    }),
);

export const ticketsIssued = once(
  'hyperdesk_connect_tickets_total',
  () =>
    new Counter({
      name: 'hyperdesk_connect_tickets_total',
      help: 'Connect ticket requests, by outcome',
      labelNames: ['outcome'] as const,
    }),
);

export { register as metricsRegistry };

import type { Clock } from './clock';
import type { Counters } from './counters';

type Reply = (err: Error | null, res: { current: number; ttl: number } | null) => void;

/**
 * @fastify/rate-limit's custom `store` over our Counters, so the route limits (contact, captcha, tickets, rosters…)
 * count in the same place as every other limit: PostgreSQL or Redis when several servers share them. The plugin
 * constructs it with its global options and asks for one child per limited route; a child prefixes its keys with
 * the route, as the plugin's own stores do.
 */
export function counterStore(counters: Counters, clock: Clock) {
  return class CounterStore {
    readonly prefix: string;
    constructor(_globalParams?: unknown, prefix = 'route:') {
      this.prefix = prefix;
    }
    incr(key: string, cb: Reply, timeWindow: number): void {
      counters.hit(this.prefix + key, timeWindow).then(
        (w) => cb(null, { current: w.count, ttl: Math.max(0, w.resetAt - clock.now().getTime()) }),
        (err: Error) => cb(err, null),
      );
    }
    read(key: string, cb: Reply): void {
      counters.peek(this.prefix + key).then(
        (w) => cb(null, w ? { current: w.count, ttl: Math.max(0, w.resetAt - clock.now().getTime()) } : { current: 0, ttl: 0 }),
        (err: Error) => cb(err, null),
      );
    }
    child(routeOptions: { routeInfo?: { method?: string; url?: string } }): CounterStore {
      const r = routeOptions.routeInfo ?? {};
      return new CounterStore(undefined, `route:${r.method ?? ''}${r.url ?? ''}:`);
    }
  };
}

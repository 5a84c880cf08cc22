import { Redis } from 'ioredis';
import type { Clock } from './clock';
import type { Counters, Window } from './counters';


/** INCR and, on a window's first event, its expiry, in one step; answers the count and the milliseconds left. */
const HIT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {c, ttl}`;

/**
 * Counters in Redis (REDIS_URL), shared by every server pointing at it. Windows are keys with a TTL, so Redis
 * removes ended windows itself. Window ends are reported on this server's clock (now + the key's TTL). Keys are
 * `hd:rl:<namespace>:<key>`: deployments (one database each) can share one Redis without counting together.
 */
export function redisCounters(
  url: string,
  clock: Clock,
  log: { warn(o: object, msg: string): void },
  namespace = 'hyperdesk',
): Counters {
  const PREFIX = `hd:rl:${namespace}:`;
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
  redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));
  const at = (ttlMs: number) => clock.now().getTime() + Math.max(0, ttlMs);
  return {
    kind: 'redis',
    async hit(key, windowMs) {
      const [count, ttl] = (await redis.eval(HIT, 1, PREFIX + key, String(Math.max(1, Math.round(windowMs))))) as [number, number];
      return { count: Number(count), resetAt: at(Number(ttl)) };
    },
    async peek(key): Promise<Window | null> {
      const [count, ttl] = await Promise.all([redis.get(PREFIX + key), redis.pttl(PREFIX + key)]);
      if (count === null || ttl <= 0) return null;
      return { count: Number(count), resetAt: at(ttl) };
    },
    async reset(key) {
      await redis.del(PREFIX + key);
    },
    sweep: async () => 0, // keys expire on their own
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

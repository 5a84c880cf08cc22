-- Rate-limit counters shared by every server of a deployment (issue 14.4): one row per limited key and its
-- current fixed window (which starts at the key's first event, as the in-memory limiter's did). One upsert counts
-- an event; a job deletes rows whose window ended. With REDIS_URL the counters live in Redis instead.
create table rate_limits (
  key text primary key,
  window_start timestamptz not null,
  expires_at timestamptz not null,
  count integer not null
);
create index rate_limits_expires_idx on rate_limits(expires_at);

-- Desktop sessions are counted per user across every server (at most 4 open). A server refreshes alive_at of its
-- open sessions every few seconds; an open row whose server died (kill -9, host lost) stops counting once
-- alive_at is stale, and the idle job closes it.
alter table connect_sessions add column alive_at timestamptz not null default now();
create index connect_sessions_alive_idx on connect_sessions(user_id, alive_at) where closed_at is null;

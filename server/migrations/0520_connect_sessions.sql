-- One row per desktop connection through the gateway: idle protection reads the latest activity of each machine
-- from here (so every server of a deployment agrees), and operators see who was connected and how much was relayed.
create table connect_sessions (
  id uuid primary key,
  machine_id uuid not null references machines(id) on delete cascade,
  user_id uuid not null references users(id) on delete cascade,
  opened_at timestamptz not null,
  closed_at timestamptz,
  last_input_at timestamptz,
  bytes_to_client bigint not null default 0,
  bytes_from_client bigint not null default 0,
  close_reason text
);
create index connect_sessions_machine_idx on connect_sessions(machine_id, opened_at);
create index connect_sessions_open_idx on connect_sessions(user_id) where closed_at is null;

-- Used tickets and expired ones are swept by the idle job.
create index connect_tickets_expires_idx on connect_tickets(expires_at);

-- Single-use connect tickets (only a hash is stored) and contact messages.
create table connect_tickets (
  ticket_hash text primary key,
  user_id uuid not null references users(id),
  machine_id uuid not null references machines(id),
  expires_at timestamptz not null,
  used_at timestamptz
);

create table contact_messages (
  id uuid primary key,
  user_id uuid references users(id),
  name text not null,
  email text not null,
  query text not null,
  source text not null,
  recipient text not null,
  created_at timestamptz not null default now()
);

-- A machine is a single user's (owner_user_id, one per region+platform) or a course seat (course_id, seq).
-- desired is set by API calls; observed by the reconciler from the provider (design §5).
create table machines (
  id uuid primary key,
  owner_user_id uuid references users(id),
  course_id uuid references courses(id),
  seq int not null default 0,
  name text not null,
  region text not null,
  platform text not null,
  desired text not null default 'stopped' check (desired in ('running','stopped')),
  observed text not null default 'offline' check (observed in ('offline','processing','online')),
  processing_since timestamptz,
  online_since timestamptz,
  stop_reason text,
  provider text,
  provider_ref jsonb,
  last_student_id uuid references users(id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((owner_user_id is null) <> (course_id is null))
);
create unique index machines_single_uq on machines(owner_user_id, region, platform) where course_id is null;
create unique index machines_course_seq_uq on machines(course_id, seq) where course_id is not null;

-- Hours ledger (design §5): append-only, minutes, one row per credit lot, debit, expiry or adjustment.
-- Every row has a unique idempotency key; debits and expiries name the credit lot they draw from.
create table ledger_entries (
  id uuid primary key,
  machine_id uuid not null references machines(id),
  kind text not null check (kind in ('credit','debit','expiry','adjustment')),
  minutes int not null,
  lot_id uuid references ledger_entries(id),
  expires_at timestamptz,
  order_id uuid references orders(id),
  idempotency_key text not null unique,
  note text,
  created_at timestamptz not null default now(),
  check ((kind = 'credit' and minutes > 0 and expires_at is not null) or (kind in ('debit','expiry') and minutes < 0 and lot_id is not null) or kind = 'adjustment')
);
create index ledger_machine_idx on ledger_entries(machine_id);
create index ledger_lot_idx on ledger_entries(lot_id);

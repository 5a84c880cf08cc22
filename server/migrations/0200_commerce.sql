-- Catalog: packs for sale, per country and platform; prices in minor units of the country's currency.
create table packs (
  pack_id text primary key,
  region text not null check (region in ('DE','IN','ES','UK')),
  platform text not null,
  hours int not null check (hours > 0),
  price_minor bigint not null check (price_minor >= 0),
  currency text not null,
  active boolean not null default true,
  sort int not null default 0
);
create index packs_region_platform_idx on packs(region, platform) where active;

-- Courses (business packs): VMs machines from start_at to end_at, hours_per_machine each.
create table courses (
  id uuid primary key,
  owner_user_id uuid not null references users(id),
  name text not null,
  region text not null,
  platform text not null,
  vms int not null check (vms between 1 and 40),
  hours_per_machine int not null check (hours_per_machine > 0),
  start_at timestamptz not null,
  end_at timestamptz not null,
  created_at timestamptz not null default now(),
  check (end_at > start_at)
);
create index courses_owner_idx on courses(owner_user_id);

-- Orders: one per checkout. The server computes amount_minor; the browser never sends a price it is trusted on.
create table orders (
  id uuid primary key,
  user_id uuid not null references users(id),
  kind text not null check (kind in ('single','course')),
  pack_id text references packs(pack_id),
  region text not null,
  platform text not null,
  hours int not null,
  vms int not null default 1,
  start_at timestamptz,
  expires_at timestamptz,
  amount_minor bigint not null,
  currency text not null,
  status text not null default 'pending' check (status in ('pending','paid','failed','expired')),
  provider text not null,
  provider_session_id text unique,
  payment_method text,
  checkout_url text,
  success_url text not null,
  cancel_url text not null,
  created_at timestamptz not null default now(),
  paid_at timestamptz,
  fulfilled_at timestamptz,
  course_id uuid references courses(id),
  machine_id uuid
);
create index orders_user_idx on orders(user_id);

-- Webhook deliveries already processed (dedup on the provider's event id).
create table webhook_events (
  event_id text primary key,
  provider text not null,
  type text not null,
  received_at timestamptz not null default now()
);

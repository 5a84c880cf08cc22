-- Commerce (issue 3): the seeded catalog, the built-in checkout's sessions and the outbox of its webhook events.

-- Catalog: 10/25/50/100-hour packs per country and platform, prices in minor units of the country's currency
-- (pence, cents, paise). Operators change prices by updating rows (or deactivate with active = false).
insert into packs (pack_id, region, platform, hours, price_minor, currency, sort) values
  ('uk-unreal-10h', 'UK', 'Unreal Engine', 10, 1499, 'GBP', 1),
  ('uk-unreal-25h', 'UK', 'Unreal Engine', 25, 3499, 'GBP', 2),
  ('uk-unreal-50h', 'UK', 'Unreal Engine', 50, 6499, 'GBP', 3),
  ('uk-unreal-100h', 'UK', 'Unreal Engine', 100, 11999, 'GBP', 4),
  ('uk-unity-10h', 'UK', 'Unity Engine', 10, 1499, 'GBP', 1),
  ('uk-unity-25h', 'UK', 'Unity Engine', 25, 3499, 'GBP', 2),
  ('uk-unity-50h', 'UK', 'Unity Engine', 50, 6499, 'GBP', 3),
  ('uk-unity-100h', 'UK', 'Unity Engine', 100, 11999, 'GBP', 4),
  ('de-unreal-10h', 'DE', 'Unreal Engine', 10, 1699, 'EUR', 1),
  ('de-unreal-25h', 'DE', 'Unreal Engine', 25, 3999, 'EUR', 2),
  ('de-unreal-50h', 'DE', 'Unreal Engine', 50, 7499, 'EUR', 3),
  ('de-unreal-100h', 'DE', 'Unreal Engine', 100, 13999, 'EUR', 4),
  ('de-unity-10h', 'DE', 'Unity Engine', 10, 1699, 'EUR', 1),
  ('de-unity-25h', 'DE', 'Unity Engine', 25, 3999, 'EUR', 2),
  ('de-unity-50h', 'DE', 'Unity Engine', 50, 7499, 'EUR', 3),
  ('de-unity-100h', 'DE', 'Unity Engine', 100, 13999, 'EUR', 4),
  ('es-unreal-10h', 'ES', 'Unreal Engine', 10, 1599, 'EUR', 1),
  ('es-unreal-25h', 'ES', 'Unreal Engine', 25, 3799, 'EUR', 2),
  ('es-unreal-50h', 'ES', 'Unreal Engine', 50, 6999, 'EUR', 3),
  ('es-unreal-100h', 'ES', 'Unreal Engine', 100, 12999, 'EUR', 4),
  ('es-unity-10h', 'ES', 'Unity Engine', 10, 1599, 'EUR', 1),
  ('es-unity-25h', 'ES', 'Unity Engine', 25, 3799, 'EUR', 2),
  ('es-unity-50h', 'ES', 'Unity Engine', 50, 6999, 'EUR', 3),
  ('es-unity-100h', 'ES', 'Unity Engine', 100, 12999, 'EUR', 4),
  ('in-unreal-10h', 'IN', 'Unreal Engine', 10, 119900, 'INR', 1),
  ('in-unreal-25h', 'IN', 'Unreal Engine', 25, 279900, 'INR', 2),
  ('in-unreal-50h', 'IN', 'Unreal Engine', 50, 529900, 'INR', 3),
  ('in-unreal-100h', 'IN', 'Unreal Engine', 100, 999900, 'INR', 4),
  ('in-unity-10h', 'IN', 'Unity Engine', 10, 119900, 'INR', 1),
  ('in-unity-25h', 'IN', 'Unity Engine', 25, 279900, 'INR', 2),
  ('in-unity-50h', 'IN', 'Unity Engine', 50, 529900, 'INR', 3),
  ('in-unity-100h', 'IN', 'Unity Engine', 100, 999900, 'INR', 4)
on conflict (pack_id) do nothing;

-- The built-in payment provider's own truth (what Stripe keeps on its side for a Checkout Session).
-- `events` numbers the webhook events the session has emitted (event id evt_<session>_<n>).
create table builtin_checkout_sessions (
  id text primary key,
  order_id uuid not null unique references orders(id),
  status text not null default 'open' check (status in ('open','paid','declined','cancelled','expired')),
  amount_minor bigint not null check (amount_minor >= 0),
  currency text not null,
  description text not null,
  success_url text not null,
  cancel_url text not null,
  card_brand text,
  card_last4 text,
  events int not null default 0,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  completed_at timestamptz
);
create index builtin_checkout_open_idx on builtin_checkout_sessions(expires_at) where status = 'open';

-- Webhook events a provider running inside this server emits; written in the transaction that changes the
-- provider's truth, delivered (signed at send time) after commit and retried by a job until acknowledged.
create table payment_webhook_outbox (
  id uuid primary key,
  provider text not null,
  event_id text not null unique,
  payload text not null,
  created_at timestamptz not null default now(),
  next_attempt_at timestamptz not null default now(),
  attempts int not null default 0,
  delivered_at timestamptz,
  last_error text
);
create index payment_webhook_outbox_pending_idx on payment_webhook_outbox(next_attempt_at) where delivered_at is null;


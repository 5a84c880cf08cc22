create table users (
  id uuid primary key,
  email text not null unique,
  display_name text not null,
  password_hash text not null,
  instructor boolean not null default false,
  admin boolean not null default false,
  created_at timestamptz not null default now(),
  password_changed_at timestamptz not null default now()
);

-- Refresh sessions: the cookie holds id.secret; only a hash of the secret is stored.
create table sessions (
  id uuid primary key,
  user_id uuid not null references users(id) on delete cascade,
  secret_hash text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index sessions_user_idx on sessions(user_id);

create table signing_keys (
  kid text primary key,
  private_jwk jsonb not null,
  public_jwk jsonb not null,
  created_at timestamptz not null default now()
);

create table password_resets (
  token_hash text primary key,
  user_id uuid not null references users(id) on delete cascade,
  expires_at timestamptz not null,
  used_at timestamptz
);

-- Each captcha solution is accepted once.
create table captcha_used (
  signature text primary key,
  expires_at timestamptz not null
);

-- Secrets generated on first start (captcha HMAC key, webhook secrets), never committed.
create table secrets (
  name text primary key,
  value text not null,
  created_at timestamptz not null default now()
);

-- Every e-mail the product sends; the embedded transport stops here, SMTP delivers and marks it sent.
create table mail_outbox (
  id uuid primary key,
  to_addr text not null,
  subject text not null,
  body_text text not null,
  body_html text,
  kind text not null,
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  attempts int not null default 0,
  last_error text
);
create index mail_outbox_pending_idx on mail_outbox(created_at) where sent_at is null;

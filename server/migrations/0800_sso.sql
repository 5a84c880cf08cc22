-- Single sign-on with a school's OpenID Connect identity provider (issue 23.1).

-- Providers an operator added in the console. The client secret is stored encrypted (AES-256-GCM, sso/secret-box.ts)
-- and never answered to a browser. allowed_domains: e-mail domains (lower-case) a user's verified address must have.
create table sso_providers (
  id uuid primary key,
  name text not null,
  issuer text not null,
  client_id text not null,
  client_secret_enc text not null,
  allowed_domains jsonb not null default '[]',
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- One sign-in through a provider in flight: found by its state (hash), bound to the browser that started it (the
-- hash of the secret in its hd_sso cookie), single use (used_at) and short-lived (expires_at). The nonce and the
-- PKCE verifier never leave the server.
create table sso_attempts (
  state_hash text primary key,
  provider_id uuid not null,
  browser_hash text not null,
  nonce text not null,
  code_verifier text not null,
  intent text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index sso_attempts_expires_idx on sso_attempts(expires_at);

-- Two-factor sign-in (issue 23.2): TOTP (RFC 6238) with single-use recovery codes, and the short-lived challenge a
-- password (or SSO) sign-in answers when the account has a second factor.

-- One authenticator per user. The secret is AES-256-GCM encrypted with a server-generated key (identity/totp.ts);
-- confirmed_at is null while an enrolment waits for its first code. last_step is the last accepted time step: a
-- code is accepted only for a later step, so a code seen once (even within its 30 s) never works again.
create table user_totp (
  user_id uuid primary key references users(id) on delete cascade,
  secret_enc text not null,
  created_at timestamptz not null default now(),
  confirmed_at timestamptz,
  last_step bigint
);

-- Ten per enrolment, each used once; only a SHA-256 of each code (80 random bits) is kept.
create table recovery_codes (
  user_id uuid not null references users(id) on delete cascade,
  code_hash text not null,
  used_at timestamptz,
  primary key (user_id, code_hash)
);

-- A sign-in that passed its first factor and waits for the code: single use, a few minutes, a few tries.
create table sign_in_challenges (
  id_hash text primary key,
  user_id uuid not null references users(id) on delete cascade,
  method text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  attempts int not null default 0,
  used_at timestamptz
);
create index sign_in_challenges_expires_idx on sign_in_challenges(expires_at);

-- How a refresh session was signed in ('pwd', 'pwd otp', 'sso otp', …): each refreshed id token carries it (amr).
alter table sessions add column amr text not null default 'pwd';

-- The first admin's generated password (npm run admin -- create-admin) must be changed before the console opens.
alter table users add column password_must_change boolean not null default false;

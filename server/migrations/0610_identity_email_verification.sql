-- E-mail verification (issue 11): roster access keys on the e-mail, so it must be proven. Existing users start
-- unverified (a squatted address stays unproven); they verify with a resent link or a password reset.
alter table users add column email_verified_at timestamptz;

-- Single-use verification links; only the token's hash is stored. user_id is set for the sign-up/resend link of an
-- account, null for a link mailed with a course invitation (bound to the address: it verifies whichever account
-- holds that address when it is opened).
create table email_verifications (
  token_hash text primary key,
  email text not null,
  user_id uuid references users(id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index email_verifications_email_idx on email_verifications(email);
create index email_verifications_expires_idx on email_verifications(expires_at);

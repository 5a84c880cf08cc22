-- Refresh-secret rotation: the previous secret stays valid for a short grace period (parallel tabs racing on one
-- refresh); presenting it later means the cookie was copied, and the session is revoked.
alter table sessions add column prev_secret_hash text;
alter table sessions add column rotated_at timestamptz;

-- SMTP delivery bookkeeping: a sender claims a row (claimed_until) so two servers never send it twice, and a failed
-- row waits until next_attempt_at before the next try.
alter table mail_outbox add column next_attempt_at timestamptz;
alter table mail_outbox add column claimed_until timestamptz;

create index password_resets_user_idx on password_resets(user_id);
create index captcha_used_expires_idx on captcha_used(expires_at);

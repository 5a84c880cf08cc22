-- Outgoing mail in the operator console (issue 23). failed_at: delivery given up (the relay refused it for good, a
-- 5xx answer, or the last of the tries failed); the console shows last_error as the reason. An operator's resend
-- queues the row again (resent_at, resends); the audit log keeps what it was before.
alter table mail_outbox add column failed_at timestamptz;
alter table mail_outbox add column resent_at timestamptz;
alter table mail_outbox add column resends int not null default 0;
-- Rows that gave up before this column existed.
update mail_outbox set failed_at = coalesce(next_attempt_at, created_at) where sent_at is null and attempts >= 10;
-- The console's list, newest first (keyset).
create index mail_outbox_created_idx on mail_outbox(created_at desc, id desc);

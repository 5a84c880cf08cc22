-- A user's own changes to their account (turning two-factor sign-in on or off, spending a recovery code) are audited
-- with actor_kind 'account' (the account holder, from the Profile page), not 'console' (an operator in the console).
alter table admin_audit drop constraint if exists admin_audit_actor_kind_check;
alter table admin_audit add constraint admin_audit_actor_kind_check check (actor_kind in ('console', 'cli', 'account'));
alter table admin_audit drop constraint if exists admin_audit_actor_check;
alter table admin_audit add constraint admin_audit_actor_check
  check ((actor_kind in ('console', 'account') and actor_id is not null and actor_email is not null) or (actor_kind = 'cli' and actor_os_user is not null));
update admin_audit set actor_kind = 'account' where action in ('user.totp.enable', 'user.totp.disable', 'user.totp.recovery-code.use');

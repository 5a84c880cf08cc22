-- The audit log also records the operator CLI's actions (issue 23): actor_kind 'cli' with the OS user who ran it
-- (actor_os_user) and no console account; 'console' rows keep the operator's account id and e-mail.
alter table admin_audit add column actor_kind text not null default 'console' check (actor_kind in ('console', 'cli'));
alter table admin_audit add column actor_os_user text;
alter table admin_audit alter column actor_id drop not null;
alter table admin_audit alter column actor_email drop not null;
alter table admin_audit add constraint admin_audit_actor_check
  check ((actor_kind = 'console' and actor_id is not null and actor_email is not null) or (actor_kind = 'cli' and actor_os_user is not null));
-- The console filters by action prefix (user.claim, mail.resend, …).
create index admin_audit_action_idx on admin_audit(action text_pattern_ops, id);

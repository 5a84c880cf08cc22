-- Operator console (issue 15.2).

-- A disabled account cannot sign in or refresh; the console ends its sessions and stops its machines.
alter table users add column disabled_at timestamptz;

-- Every operator action: who, what, when, before/after. The server only ever inserts here (admin/audit.ts has no
-- update or delete path); a database role without UPDATE/DELETE on this table would make that a guarantee.
create table admin_audit (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  actor_id uuid not null,
  actor_email text not null,
  action text not null,
  target_type text not null,
  target_id text not null,
  before jsonb,
  after jsonb
);
create index admin_audit_target_idx on admin_audit(target_id, id);
create index admin_audit_actor_idx on admin_audit(actor_email, id);

-- Substring search of users by e-mail or name (ILIKE '%…%') through trigram indexes where the server has pg_trgm
-- (PostgreSQL's contrib, a trusted extension since 13); without it (PGlite) the search reads every user.
do $$
begin
  if exists (select 1 from pg_available_extensions where name = 'pg_trgm') then
    create extension if not exists pg_trgm;
    -- fastupdate off: sign-ups are rare, and a pending list of new rows makes the planner fall back to a scan.
    create index users_email_trgm_idx on users using gin (email gin_trgm_ops) with (fastupdate = off);
    create index users_name_trgm_idx on users using gin (display_name gin_trgm_ops) with (fastupdate = off);
  end if;
end $$;

-- Keyset pagination of the console's lists, newest first.
create index orders_created_idx on orders(created_at desc, id desc);
create index machines_created_idx on machines(created_at desc, id desc);
create index courses_created_idx on courses(created_at desc, id desc);
create index contact_messages_created_idx on contact_messages(created_at desc, id desc);
create index ledger_adjustments_idx on ledger_entries(created_at desc, id desc) where kind = 'adjustment';

-- The lot remainders move out of ledger_entries into a small table of their own (0650 kept them on the credit rows):
-- a debit's update of its lot then stays a HOT update on a half-empty page (fillfactor 50, `remaining` is in no
-- index), instead of a new version of a row on a page that debits keep filling, with a new entry in each of the
-- ledger's indexes. ledger_entries is strictly append-only again. Same triggers, same guarantees.
create table ledger_lots (
  id uuid primary key references ledger_entries(id),
  machine_id uuid not null references machines(id),
  expires_at timestamptz not null,
  minutes int not null,
  remaining int not null check (remaining >= 0),
  created_at timestamptz not null
) with (fillfactor = 50);
create index ledger_lots_machine_idx on ledger_lots(machine_id, expires_at) include (minutes);
create index ledger_lots_expires_idx on ledger_lots(expires_at);

insert into ledger_lots (id, machine_id, expires_at, minutes, remaining, created_at)
  select l.id, l.machine_id, l.expires_at, l.minutes,
    l.minutes + coalesce((select sum(c.minutes) from ledger_entries c where c.lot_id = l.id), 0), l.created_at
  from ledger_entries l where l.kind = 'credit';

drop trigger ledger_lot_init on ledger_entries;
drop trigger ledger_lot_apply on ledger_entries;
drop function ledger_lot_init();
drop index ledger_lots_idx;
drop index ledger_lots_due_idx;
alter table ledger_entries drop constraint ledger_remaining_ck;
alter table ledger_entries drop column remaining;

-- A credit opens its lot; a child row (debit, expiry, adjustment) moves its lot's remainder in the same statement
-- (the UPDATE row-locks the lot; the check refuses a lot below 0). A replay that hits the unique key inserts nothing.
create function ledger_lot_open() returns trigger language plpgsql as $$
begin
  insert into ledger_lots (id, machine_id, expires_at, minutes, remaining, created_at)
    values (new.id, new.machine_id, new.expires_at, new.minutes, new.minutes, new.created_at);
  return null;
end $$;

create or replace function ledger_lot_apply() returns trigger language plpgsql as $$
begin
  update ledger_lots set remaining = remaining + new.minutes where id = new.lot_id;
  if not found then raise exception 'ledger entry % names % which is not a credit lot', new.id, new.lot_id; end if;
  return null;
end $$;

create trigger ledger_lot_open after insert on ledger_entries for each row when (new.kind = 'credit')
  execute function ledger_lot_open();
create trigger ledger_lot_apply after insert on ledger_entries for each row when (new.lot_id is not null)
  execute function ledger_lot_apply();

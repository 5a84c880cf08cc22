-- Hours an operator added to a lot (issue 22): an `adjustment` row with minutes > 0 raises the lot's remainder above
-- what was bought, so "left of total" must count it in the total too (the balance read "11.4 of 10 hours left").
-- `added` sums a lot's positive adjustments, moved by the same trigger and in the same statement as `remaining`;
-- the balance's total is then minutes + added of the live lots, never less than what is left.
alter table ledger_lots add column added int not null default 0 check (added >= 0);

update ledger_lots l set added = a.minutes
  from (select lot_id, sum(minutes)::int as minutes from ledger_entries
        where kind = 'adjustment' and minutes > 0 group by lot_id) a
  where a.lot_id = l.id;

create or replace function ledger_lot_apply() returns trigger language plpgsql as $$
begin
  update ledger_lots set remaining = remaining + new.minutes,
      added = added + case when new.kind = 'adjustment' and new.minutes > 0 then new.minutes else 0 end
    where id = new.lot_id;
  if not found then raise exception 'ledger entry % names % which is not a credit lot', new.id, new.lot_id; end if;
  return null;
end $$;

-- When a machine's desktop (its instance and home) was made ahead of its first start, so that start costs what any
-- later one does (the reconciler's preparer, machines/preparer.ts). Null: nothing made yet (a new machine, or one reset).
-- Machines made before this have had their first start or make their desktop at it, as before: marked made.
alter table machines add column if not exists prepared_at timestamptz;
update machines set prepared_at = now() where prepared_at is null;
create index if not exists machines_unprepared_idx on machines (created_at) where prepared_at is null;

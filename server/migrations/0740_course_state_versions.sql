-- A version on every course machine (issue 14): the instructor's and student's balance read keeps what it built of
-- a course's machines (the least time left, the course state, the seats' names and states) and rebuilds it only when
-- the course's newest machine version moved. Every change that shows in that part takes a new version from one
-- sequence, in the same statement as the change itself: a machine's state, stop reason, processing start or name
-- (before update, on the row itself) and its lots' remainders (a credit, debit, expiry or adjustment: the ledger
-- locks the machine row before it writes, so the bump adds no new lock order). Who sits on a seat is not
-- versioned: it changes every few seconds and is read fresh on every read.
create sequence machine_state_seq;
alter table machines add column state_v bigint not null default nextval('machine_state_seq');
create index machines_course_state_idx on machines(course_id, state_v) where course_id is not null;
create index seats_course_idx on seats(course_id);

create function machine_state_bump() returns trigger language plpgsql as $$
begin
  new.state_v := nextval('machine_state_seq');
  return new;
end $$;

create trigger machine_state_bump before update on machines for each row
  when (new.course_id is not null and (old.observed, old.stop_reason, old.processing_since, old.name)
    is distinct from (new.observed, new.stop_reason, new.processing_since, new.name))
  execute function machine_state_bump();

create function machine_lots_bump() returns trigger language plpgsql as $$
begin
  update machines set state_v = nextval('machine_state_seq') where id = new.machine_id and course_id is not null;
  return null;
end $$;

create trigger machine_lots_bump after insert or update of remaining on ledger_lots for each row
  execute function machine_lots_bump();

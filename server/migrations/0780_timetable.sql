-- Class timetable (issue 22.1): the class sessions an instructor sets inside a course's dates, and one row per
-- class the leader's timetable job started (warm start before it begins) and stopped (after it ends).
--   class_sessions: weekly (weekdays bitmask, Monday = 1 … Sunday = 64) or once (on_day, YYYY-MM-DD); start and end
--                   are minutes of the day on the wall clock of time_zone (an IANA zone; the course's by default).
--   class_runs:     the "once" of each start and stop: the primary key is one class (a session's occurrence), the
--                   start is recorded in the same transaction as the machines' start request (started_at), the stop
--                   likewise (ended_at), so a second server, a second pass or a crash and retry does neither twice.
--                   ends_at is the class end as last seen (a changed session moves it; a deleted one keeps it).
create table class_sessions (
  id uuid primary key,
  course_id uuid not null references courses(id) on delete cascade,
  kind text not null check (kind in ('weekly', 'once')),
  weekdays integer not null default 0 check (weekdays between 0 and 127),
  on_day text check (on_day ~ '^\d{4}-\d{2}-\d{2}$'),
  start_minute integer not null check (start_minute between 0 and 1439),
  end_minute integer not null check (end_minute between 1 and 1440),
  time_zone text not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check (end_minute > start_minute),
  check ((kind = 'weekly' and weekdays > 0 and on_day is null) or (kind = 'once' and on_day is not null))
);
create index class_sessions_course_idx on class_sessions(course_id);

create table class_runs (
  session_id uuid not null,
  starts_at timestamptz not null,
  course_id uuid not null references courses(id) on delete cascade,
  ends_at timestamptz not null,
  started_at timestamptz,
  machines_started integer,
  ended_at timestamptz,
  machines_stopped integer,
  primary key (session_id, starts_at)
);
create index class_runs_open_idx on class_runs(ends_at) where ended_at is null;

-- A stop by the timetable names itself for the operator console (migration 0761's list plus 'timetable').
alter table machines drop constraint if exists machines_stopped_by_check;
alter table machines add constraint machines_stopped_by_check
  check (stopped_by in ('user', 'instructor', 'idle', 'hours', 'course-end', 'operator', 'failure', 'timetable', 'host-lost'));

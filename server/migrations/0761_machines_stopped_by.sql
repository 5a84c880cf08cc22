-- Who or what stopped a machine last (issue 23), for the operator console: every stop path names itself, whether
-- or not it shows its user a reason (stop_reason stays the text the dashboard shows and is cleared by a start).
alter table machines add column stopped_by text
  check (stopped_by in ('user', 'instructor', 'idle', 'hours', 'course-end', 'operator', 'failure'));
alter table machines add column stopped_at timestamptz;

-- A machine whose cluster member went away (issue 20, the lxd provider's cluster): the reconciler stops it with a
-- reason the dashboard shows, and the operator console's "Last stop" names the cause.
alter table machines drop constraint if exists machines_stopped_by_check;
alter table machines add constraint machines_stopped_by_check
  check (stopped_by in ('user', 'instructor', 'idle', 'hours', 'course-end', 'operator', 'failure', 'host-lost'));

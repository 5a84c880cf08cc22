-- Hours that speak up (issue 22.4): one row per alert ever raised, written in the same transaction as its mail in
-- mail_outbox. The primary key is the "once": a second pass, a restarted server or a second server that finds the same
-- alert due inserts nothing and so queues no second mail.
--   subject: a single user's machine ('machine', machines.id) or an instructor's course ('course', courses.id)
--   kind:    'low-20' (20% of the hours left), 'low-1h' (one hour left), 'expiry-3d' (a lot expires within 3 days)
--   ref:     what makes the alert new: the newest live lot for low-hours alerts (a top-up opens a new round), the
--            expiring lot (machines) or its expiry instant (a course's machines share one) for expiry alerts.
create table hour_alerts (
  subject_kind text not null check (subject_kind in ('machine', 'course')),
  subject_id uuid not null,
  kind text not null check (kind in ('low-20', 'low-1h', 'expiry-3d')),
  ref text not null,
  user_id uuid not null references users(id),
  machine_name text not null,
  created_at timestamptz not null,
  primary key (subject_id, kind, ref)
);
create index hour_alerts_user_idx on hour_alerts(user_id, created_at);

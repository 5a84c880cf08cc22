-- Issue 11.4: a course machine runs with the home folder of the student holding its seat, never the previous
-- student's. home_key is the home the machine should run with (set when a seat is given); running_home_key the one
-- its desktop was started with (the reconciler restarts the desktop when they differ).
alter table machines add column home_key text;
alter table machines add column running_home_key text;

-- Every (course, student) home ever used, so the course's data retention removes them all.
create table course_homes (
  course_id uuid not null references courses(id) on delete cascade,
  user_id uuid not null references users(id),
  home_key text not null,
  created_at timestamptz not null default now(),
  primary key (course_id, user_id)
);

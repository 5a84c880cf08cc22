-- An instructor ended a student's session (issue 22.3): the student's seat is freed, and this row lets the
-- gateway tell that student's open tab why it closed. One row per course and student, replaced on each ending.
create table if not exists seat_endings (
  course_id uuid not null,
  user_id uuid not null,
  ended_at timestamptz not null default now(),
  primary key (course_id, user_id)
);

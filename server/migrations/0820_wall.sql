-- Instructor wall (issue 22.2). A student's raised hand, one per (course, student), until they or the instructor
-- lower it; and take-overs: the instructor whose keyboard and mouse reach a course machine's desktop. A take-over
-- lives while ended_at is null and the instructor's watch stream keeps alive_at fresh (the server holding the stream
-- refreshes it); one not refreshed for 20 s (that server died, the tab went away) counts as ended. The server refuses
-- the instructor's input unless a live take-over of that machine is theirs. Ended rows tell the student's tab when
-- the take-over ended.
create table wall_hands (
  course_id uuid not null references courses(id) on delete cascade,
  user_id uuid not null references users(id) on delete cascade,
  raised_at timestamptz not null,
  primary key (course_id, user_id)
);

create table wall_takeovers (
  id uuid primary key,
  machine_id uuid not null references machines(id) on delete cascade,
  course_id uuid not null references courses(id) on delete cascade,
  instructor_id uuid not null references users(id) on delete cascade,
  student_id uuid references users(id) on delete set null,
  started_at timestamptz not null,
  alive_at timestamptz not null,
  ended_at timestamptz
);
create unique index wall_takeovers_open_idx on wall_takeovers(machine_id) where ended_at is null;
create index wall_takeovers_student_idx on wall_takeovers(student_id, course_id);

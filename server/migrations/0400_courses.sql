-- Student roster of a course: e-mails (lower case); a new upload replaces it.
create table roster (
  course_id uuid not null references courses(id) on delete cascade,
  email text not null,
  added_at timestamptz not null default now(),
  primary key (course_id, email)
);
create index roster_email_idx on roster(email);

-- Who holds which seat now: at most one student per machine, at most one seat per student per course.
create table seats (
  machine_id uuid primary key references machines(id),
  course_id uuid not null references courses(id),
  user_id uuid not null references users(id),
  claimed_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  unique (course_id, user_id)
);

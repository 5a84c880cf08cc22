-- Course invitation e-mails sent, so a re-uploaded list does not mail the same address again the same day and
-- an instructor's daily invitation budget can be counted. Kept for a day or more; rows are tiny.
create table roster_invitations (
  course_id uuid not null references courses(id) on delete cascade,
  email text not null,
  instructor_id uuid not null references users(id),
  sent_at timestamptz not null default now()
);
create index roster_invitations_course_email_idx on roster_invitations(course_id, email, sent_at);
create index roster_invitations_instructor_idx on roster_invitations(instructor_id, sent_at);

-- Students already on a list were invited when they were added.
insert into roster_invitations (course_id, email, instructor_id, sent_at)
  select r.course_id, r.email, c.owner_user_id, r.added_at from roster r join courses c on c.id = r.course_id;

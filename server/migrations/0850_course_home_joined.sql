-- A course home given to a student before they connect (Start All and a class's warm start pre-attach the homes of
-- signed-up students: issue 22.5) is not "joined" yet: joined_at is set when the student first takes a seat.
alter table course_homes add column if not exists joined_at timestamptz;
update course_homes set joined_at = created_at where joined_at is null;

-- Issue 11.3: metering charges only minutes in which the machine was observed running. The reconciler writes
-- last_seen_at each time it finds the desktop answering; a machine that was online before this column existed
-- counts as seen now.
alter table machines add column last_seen_at timestamptz;
update machines set last_seen_at = now() where observed = 'online';

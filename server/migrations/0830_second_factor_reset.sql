-- An operator's reset of a user's second factor (a lost phone) ends their refresh sessions; id tokens issued before
-- it stay valid until they expire (15 minutes), so enrolling a new authenticator also needs a token issued after
-- the last reset (issue 23.2): a stolen id token cannot enrol the thief's authenticator.
alter table users add column if not exists second_factor_reset_at timestamptz;

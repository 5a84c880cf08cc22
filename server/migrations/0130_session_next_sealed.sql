-- The secret a rotation handed out, sealed under the secret it replaced (AES-256-GCM, key derived from that secret):
-- a refresh with the previous cookie inside the grace period gets the same new cookie again (its first answer may
-- never have reached the browser). The database alone cannot open it: the previous secret is only in the cookie.
alter table sessions add column if not exists next_secret_sealed text;

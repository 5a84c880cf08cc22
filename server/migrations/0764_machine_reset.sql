-- Reset machine (issue 20): 'desktop' brings the desktop back to the image and keeps the home; 'home' also erases
-- the home. The reconciler carries it out (stopping a running desktop first) and clears it.
alter table machines add column if not exists reset_requested text
  check (reset_requested in ('desktop', 'home'));

import { HELP_EMAIL, HELP_MAILTO } from './help';

/** 'Need help? Write to help@…' line of the result pages and the dashboard (spec §1). */
export function HelpEmail({ className, lead = 'Need help? Write to us at' }: { className?: string; lead?: string }) {
  return (
    <p className={className}>
      {lead} <a href={HELP_MAILTO}>{HELP_EMAIL}</a>
    </p>
  );
}

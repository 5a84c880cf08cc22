/** The help address shown on the payment result pages and the dashboard (spec §1). */
export const HELP_EMAIL = 'help@hyperdesk.io';
export const HELP_MAILTO = `mailto:${HELP_EMAIL}`;

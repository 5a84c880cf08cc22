import type { OutgoingMail } from '../mail/service';
import type { UserRow } from './users';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The password-reset e-mail: the single-use link, valid for one hour. */
export function resetMail(user: Pick<UserRow, 'email' | 'displayName'>, link: string): OutgoingMail {
  const text = [
    `Hello ${user.displayName},`,
    '',
    'Someone (hopefully you) asked to reset the password of your Hyperdesk account.',
    'Open this link within one hour to choose a new password. It works once:',
    '',
    link,
    '',
    'If you did not ask for this, ignore this e-mail: your password stays as it is.',
  ].join('\n');
  const html = [
    `<p>Hello ${escapeHtml(user.displayName)},</p>`,
    '<p>Someone (hopefully you) asked to reset the password of your Hyperdesk account.',
    'Open this link within one hour to choose a new password. It works once:</p>',
    `<p><a href="${escapeHtml(link)}">Reset your password</a></p>`,
    `<p>${escapeHtml(link)}</p>`,
    '<p>If you did not ask for this, ignore this e-mail: your password stays as it is.</p>',
  ].join('\n');
  return { to: user.email, subject: 'Reset your Hyperdesk password', text, html, kind: 'password-reset' };
}

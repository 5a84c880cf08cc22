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

/** The sign-up (or resent) verification e-mail: a single-use link, valid for 24 hours. */
export function verificationMail(user: { email: string; displayName: string }, link: string): OutgoingMail {
  const text = [
    `Hello ${user.displayName},`,
    '',
    'Please confirm that this is your e-mail address for Hyperdesk. Open this link within 24 hours. It works once:',
    '',
    link,
    '',
    'Course machines your instructor gives you appear on your dashboard once the address is confirmed.',
    'If you did not sign up for Hyperdesk, do not open the link; use "Forgot password" to take over the account.',
  ].join('\n');
  const html = [
    `<p>Hello ${escapeHtml(user.displayName)},</p>`,
    '<p>Please confirm that this is your e-mail address for Hyperdesk. Open this link within 24 hours. It works once:</p>',
    `<p><a href="${escapeHtml(link)}">Verify your e-mail address</a></p>`,
    `<p>${escapeHtml(link)}</p>`,
    '<p>Course machines your instructor gives you appear on your dashboard once the address is confirmed.',
    'If you did not sign up for Hyperdesk, do not open the link; use "Forgot password" to take over the account.</p>',
  ].join('\n');
  return { to: user.email, subject: 'Verify your Hyperdesk e-mail address', text, html, kind: 'email-verification' };
}

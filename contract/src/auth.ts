import { z } from 'zod';
import { Email } from './common';

/** Error codes the identity calls answer with; the web maps them to spec §8 texts. */
export const AUTH_MESSAGES = {
  'auth/weak-password': 'Password should be at least 6 characters long',
  'auth/email-already-in-use': 'The provided email is already in use by an existing user',
  'auth/invalid-email': 'Email address is invalid',
  'auth/login-failed': 'Unable to login. Please cross check your login details.',
  'auth/captcha-required': 'captcha verification is required',
  'auth/password-mismatch': 'Password does not match!',
  'auth/fields-required': 'All fields are required!',
  'auth/signup-failed': 'Something went wrong, please try again',
  'auth/reset-failed': 'There was an error in processing your request.',
  'auth/password-change-failed': 'There was an error in updating your password.',
  'auth/change-fields-required': 'All fields are required.',
  'auth/new-password-mismatch': 'New password and confirm password should be same.',
  'auth/same-password': 'New password should not be same.',
  'auth/session-expired': 'Your session has expired. Please log in again.',
} as const;

export const User = z.object({
  uid: z.string(),
  displayName: z.string(),
  email: z.string(),
  instructor: z.boolean(),
  admin: z.boolean(),
});
export type User = z.infer<typeof User>;

/** Every successful sign-in answers the user and a short-lived id token (sent as the `idtoken` header). */
export const Session = z.object({ user: User, accessToken: z.string(), expiresIn: z.number() });
export type Session = z.infer<typeof Session>;

export const Captcha = z.string().max(4096);

export const SignupBody = z.object({
  name: z.string().max(100),
  email: Email,
  password: z.string().max(200),
  confirmPassword: z.string().max(200),
  captcha: Captcha.optional(),
});
export const LoginBody = z.object({ email: Email, password: z.string().max(200) });
export const ForgotBody = z.object({ email: z.string().max(254) });
export const ResetBody = z.object({ token: z.string().max(200), password: z.string().max(200) });
export const ChangePasswordBody = z.object({
  currentPassword: z.string().max(200),
  newPassword: z.string().max(200),
  confirmPassword: z.string().max(200),
});
export const DisplayNameBody = z.object({ displayName: z.string().trim().min(1).max(100) });

/** ALTCHA challenge as served to the widget. */
export const CaptchaChallenge = z.object({
  algorithm: z.string(),
  challenge: z.string(),
  maxnumber: z.number().optional(),
  salt: z.string(),
  signature: z.string(),
});

/** E-mail verification (issue 11): codes of POST /v1/auth/verify-email failures and the texts the page shows. */
export const VERIFY_MESSAGES = {
  'verify/link-invalid': 'This verification link has expired or was already used.',
  'verify/no-account': 'Please sign up with this e-mail address first, then open the link again.',
  'verify/other-account': 'This link is for another account. Log out and open it again.',
  'verify/login-required': 'Please log in to finish verifying your e-mail address, then open this link again.',
} as const;

export const VerifyEmailBody = z.object({ token: z.string().max(200) });
export const VerifyEmailResult = z.object({ ok: z.literal(true), email: z.string() });
export type VerifyEmailResult = z.infer<typeof VerifyEmailResult>;

/** The caller's verification state, read from the database, and how many running courses wait for it. */
export const EmailVerification = z.object({ emailVerified: z.boolean(), rosterCourses: z.number().int().nonnegative() });
export type EmailVerification = z.infer<typeof EmailVerification>;

import { userInfo } from 'node:os';

/**
 * Who runs the CLI, for the audit log: the OS user (read before the CLI switches to the data dir's owner), and the
 * user behind sudo when there is one. Not a proof of identity: whoever runs the CLI can already write the database.
 */
export function invokingOsUser(env: NodeJS.ProcessEnv = process.env): string {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = `uid ${process.getuid?.() ?? '?'}`;
  }
  const sudo = env.SUDO_USER;
  return sudo && sudo !== name ? `${sudo} (sudo as ${name})` : name;
}

/** An OS user name as it may be recorded: printable, at most 100 characters. */
export function cleanOsUser(v: unknown): string {
  const s = typeof v === 'string' ? v.replace(/[^\x20-\x7e]/g, '').trim().slice(0, 100) : '';
  return s || 'unknown';
}

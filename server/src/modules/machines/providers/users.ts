import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface MachineUser {
  name: string;
  uid: number;
  gid: number;
}

/** What a machine user's comment (GECOS) field records: which machine of which data dir it belongs to. */
export interface UserOwner {
  name: string;
  uid: number;
  machineId: string;
  dataDir: string;
}

const MARK = 'hyperdesk';

/**
 * The Unix user of a machine: `hd-` + the start of its id + a short hash of (data dir, id), so two data dirs on
 * one host (tests, a second server) never share a user. At most 22 characters (useradd allows 32).
 */
export function userNameOf(dataDir: string, machineId: string): string {
  const prefix = machineId.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 12) || 'm';
  const hash = createHash('sha256').update(`${dataDir}\0${machineId}`).digest('hex').slice(0, 6);
  return `hd-${prefix}-${hash}`;
}

function passwd(): string[][] {
  try {
    return readFileSync('/etc/passwd', 'utf8').split('\n').map((l) => l.split(':'));
  } catch {
    return [];
  }
}

export function lookupUser(name: string): MachineUser | null {
  const row = passwd().find((f) => f[0] === name);
  return row ? { name, uid: Number(row[2]), gid: Number(row[3]) } : null;
}

/** Machine users on this host (of any data dir), from their comment field. */
export function machineUsers(): UserOwner[] {
  const out: UserOwner[] = [];
  for (const f of passwd()) {
    if (!f[0]?.startsWith('hd-')) continue;
    const [mark, machineId, dir] = (f[4] ?? '').split(' ');
    if (mark !== MARK || !machineId || !dir) continue;
    out.push({ name: f[0], uid: Number(f[2]), machineId, dataDir: Buffer.from(dir, 'base64url').toString('utf8') });
  }
  return out;
}

/**
 * One useradd/userdel at a time in this process: they lock /etc/passwd, and 40 parallel starts fighting for the
 * lock (retrying after a random pause) took seconds where taking turns takes a fraction of one.
 */
let turn: Promise<unknown> = Promise.resolve();
function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  const next = turn.then(fn, fn);
  turn = next.catch(() => undefined);
  return next;
}

/** useradd and userdel lock /etc/passwd; another server (or a CLI) may hold it for a moment. */
async function retrying(cmd: string, args: string[], okCodes: number[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await run(cmd, args, { timeout: 15_000 });
      return;
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (typeof code === 'number' && okCodes.includes(code)) return;
      // 10 (useradd) / 10 (userdel): cannot lock or update the password files — retry.
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
    }
  }
}

/** Creates the machine's system user with its own group (idempotent); no home, no login shell. */
export async function ensureUser(dataDir: string, machineId: string): Promise<MachineUser> {
  const name = userNameOf(dataDir, machineId);
  const found = lookupUser(name);
  if (found) return found;
  const comment = `${MARK} ${machineId} ${Buffer.from(dataDir).toString('base64url')}`;
  // 9: the user exists (another start created it meanwhile).
  await inTurn(() =>
    retrying('useradd', ['--system', '--no-create-home', '--home-dir', '/home/user', '--shell', '/usr/sbin/nologin', '--user-group', '--comment', comment, name], [9]),
  );
  const created = lookupUser(name);
  if (!created) throw new Error(`useradd did not create ${name}`);
  return created;
}

/** Removes a machine user and its group (idempotent). Its processes must have ended. */
export async function removeUser(name: string): Promise<void> {
  if (!lookupUser(name)) return;
  // 6: no such user (removed meanwhile).
  await inTurn(() => retrying('userdel', [name], [6]));
}

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import path from 'node:path';
import { isIP } from 'node:net';
import { createHash } from 'node:crypto';

const csvKinds = <T extends [string, ...string[]]>(values: T) => z.enum(values);

/** An LXD storage volume's name as host-setup.sh makes them (usr-<image fingerprint>). */
const VOLUME_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Every setting the server reads, parsed once at boot (design §4). */
const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  /** Rate-limit counters in Redis instead of PostgreSQL (several replicas); unset → PostgreSQL, or memory on PGlite. */
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().default('Hyperdesk <no-reply@hyperdesk.local>'),
  HELP_EMAIL: z.string().email().default('help@hyperdesk.io'),
  CONTACT_TO: z.string().email().default('sales@hyperdesk.io'),
  SUPPORT_TO: z.string().email().default('support@hyperdesk.io'),
  PAYMENT_PROVIDER: csvKinds(['builtin', 'stripe']).default('builtin'),
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  /** Where desktops run: `lxd` (LXD/Incus containers; scripts/lxd/host-setup.sh prepares the host). */
  MACHINE_PROVIDER: csvKinds(['lxd']).default('lxd'),
  /** The LXD (or Incus) API: its address, the deployment's project, and where its certificates are. */
  LXD_URL: z.string().url().default('https://127.0.0.1:8443'),
  LXD_PROJECT: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'letters, digits and dashes').optional(),
  LXD_CERT_DIR: z.string().optional(),
  LXD_POOL: z.string().default('hyperdesk'),
  LXD_NETWORK: z.string().default('hdbr0'),
  /** The desktop image's alias; unset: the one host-setup.sh built for this checkout (LXD_CERT_DIR/image). */
  LXD_IMAGE: z.string().optional(),
  /**
   * The project's volume with the image's /usr, mounted read-only over each new desktop's; unset: the one host-setup.sh
   * made for the image it built (LXD_CERT_DIR/usr-volume; none with LXD_IMAGE: that image keeps its own /usr).
   */
  LXD_USR_VOLUME: z.string().regex(VOLUME_NAME, 'a volume name (letters, digits and dashes)').optional(),
  /** Per-machine CPU cores and root disk of LXD desktops (the home's quota is MACHINE_DISK_MB). */
  MACHINE_CPUS: z.coerce.number().int().min(1).default(2),
  MACHINE_ROOT_MB: z.coerce.number().int().min(1024).default(8192),
  /**
   * Outbound network of desktops: `internet` (NAT; never the host, other desktops or private ranges) or `none`.
   * Applied by scripts/lxd/host-setup.sh (the bridge's ACL); checked here so a typo stops the start.
   */
  MACHINE_EGRESS: z.enum(['none', 'internet']).default('internet'),
  /** Per-machine limits of desktops: memory, processes (threads count), home folder size. */
  MACHINE_MEMORY_MB: z.coerce.number().int().min(64).default(4096),
  MACHINE_PIDS: z.coerce.number().int().min(32).default(512),
  MACHINE_DISK_MB: z.coerce.number().int().min(1).default(20480),
  CAPTCHA: csvKinds(['altcha']).default('altcha'),
  /** Course invitation e-mails one instructor may send per day, across all their courses. */
  INVITE_DAILY_LIMIT: z.coerce.number().int().positive().default(1000),
  IDLE_STOP_MINUTES: z.coerce.number().positive().default(20),
  /** TURN relays for desktop streaming (comma-separated turn:/turns: URLs) and coturn's static-auth-secret. */
  TURN_URLS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((u) => u.trim()).filter(Boolean) : []))
    .pipe(z.array(z.string().regex(/^(turns?|stun):/, 'each must start with turn:, turns: or stun:'))),
  TURN_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Lets a scraper off this host read GET /metrics with `Authorization: Bearer <token>` (loopback needs none). */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Which X-Forwarded-For hops to believe (see parseTrustProxy); never "every hop". */
  TRUST_PROXY: z.string().optional().transform((v, ctx) => {
    const parsed = parseTrustProxy(v);
    if (typeof parsed === 'string') {
      ctx.addIssue({ code: 'custom', message: parsed });
      return z.NEVER;
    }
    return parsed;
  }),
});

/**
 * TRUST_PROXY: unset, `false` or `0` → ignore X-Forwarded-For (the socket address is the client);
 * `true` or `1` → one proxy in front (its rightmost X-Forwarded-For entry is the client); an integer N → N proxies
 * in a chain; a comma list of addresses/CIDRs (`10.0.0.1,192.168.0.0/16`) → exactly those proxies are believed.
 * Trusting every hop would let a client pick its own address by writing the leftmost entry, so that is not offered.
 * Returns what Fastify's trustProxy takes (false, a hop count or an address list), or an error message.
 */
export function parseTrustProxy(value: string | undefined): false | number | string[] | string {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || v === 'false' || v === '0') return false;
  if (v === 'true') return 1;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    return hops <= 10 ? hops : 'a hop count must be between 0 and 10';
  }
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((a) => !isAddressOrCidr(a));
  if (list.length === 0 || bad.length > 0) {
    return `expected false, true, a hop count (0-10) or a comma list of proxy addresses/CIDRs, got "${value}"`;
  }
  return list;
}

function isAddressOrCidr(s: string): boolean {
  const [addr, bits, extra] = s.split('/');
  if (extra !== undefined || !addr) return false;
  const family = isIP(addr);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

export type Config = z.infer<typeof Env> & { publicUrl: string; dataDir: string; lxdProject: string; lxdCertDir: string; lxdImage: string; lxdUsrVolume: string | null };

/** The deployment's LXD project: named after its data dir, as scripts/lxd/host-setup.sh names it. */
export const lxdProjectFor = (dataDir: string) => `hd-${createHash('sha256').update(dataDir).digest('hex').slice(0, 10)}`;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  if (c.PAYMENT_PROVIDER === 'stripe' && (!c.STRIPE_SECRET_KEY || !c.STRIPE_WEBHOOK_SECRET)) {
    throw new Error('Invalid configuration:\n  PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  }
  if (c.TURN_URLS.some((u) => u.startsWith('turn')) && !c.TURN_SECRET) {
    throw new Error('Invalid configuration:\n  TURN_URLS with turn: servers needs TURN_SECRET (coturn static-auth-secret)');
  }
  const dataDir = path.resolve(c.DATA_DIR);
  const lxdCertDir = path.resolve(c.LXD_CERT_DIR ?? path.join(dataDir, 'lxd'));
  return {
    ...c,
    publicUrl: (c.PUBLIC_URL ?? `http://localhost:${c.PORT}`).replace(/\/$/, ''),
    dataDir,
    lxdProject: c.LXD_PROJECT ?? lxdProjectFor(dataDir),
    lxdCertDir,
    // The image alias host-setup.sh built for this checkout's recipe (machine-image/build.sh), and the volume with that
    // image's /usr it made for the desktops to share: an image of the operator's own keeps its own /usr.
    lxdImage: c.LXD_IMAGE ?? leftBySetup(lxdCertDir, 'image', /^[a-z0-9][a-z0-9-]{0,63}$/) ?? 'hyperdesk-desktop',
    lxdUsrVolume: c.LXD_USR_VOLUME ?? (c.LXD_IMAGE ? null : leftBySetup(lxdCertDir, 'usr-volume', VOLUME_NAME)),
  };
}

/** A setting scripts/lxd/host-setup.sh left in a file of the certificates' directory, if it is there and well-formed. */
function leftBySetup(certDir: string, file: string, form: RegExp): string | null {
  try {
    const value = readFileSync(path.join(certDir, file), 'utf8').trim();
    return form.test(value) ? value : null;
  } catch {
    return null;
  }
}

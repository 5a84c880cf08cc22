import { z } from 'zod';
import path from 'node:path';

const csvKinds = <T extends [string, ...string[]]>(values: T) => z.enum(values);

/** Every setting the server reads, parsed once at boot (design §4). */
const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().default('Hyperdesk <no-reply@hyperdesk.local>'),
  HELP_EMAIL: z.string().email().default('help@hyperdesk.io'),
  CONTACT_TO: z.string().email().default('sales@hyperdesk.io'),
  SUPPORT_TO: z.string().email().default('support@hyperdesk.io'),
  PAYMENT_PROVIDER: csvKinds(['builtin', 'stripe']).default('builtin'),
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  MACHINE_PROVIDER: csvKinds(['local']).default('local'),
  CAPTCHA: csvKinds(['altcha']).default('altcha'),
  IDLE_STOP_MINUTES: z.coerce.number().positive().default(20),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Cookies get the Secure flag unless the public URL is plain http on localhost (local development). */
  TRUST_PROXY: z.coerce.boolean().default(false),
});

export type Config = z.infer<typeof Env> & { publicUrl: string; dataDir: string };

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
  return {
    ...c,
    publicUrl: (c.PUBLIC_URL ?? `http://localhost:${c.PORT}`).replace(/\/$/, ''),
    dataDir: path.resolve(c.DATA_DIR),
  };
}

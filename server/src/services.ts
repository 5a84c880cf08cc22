import type { FastifyBaseLogger } from 'fastify';
import type { Ctx } from './context';
import type { Config } from './config';
import type { Database } from './db/client';
import type { Clock } from './lib/clock';
import { systemClock } from './lib/clock';
import { createTokens } from './modules/identity/tokens';
import { createHourAlerts, hourAlertsJob } from './modules/alerts/service';
import { createLedger, ledgerExpiryJob } from './modules/ledger/service';
import { createCatalog } from './modules/catalog/service';
import { createBilling } from './modules/billing/service';
import { createMailer, smtpTransport } from './modules/mail/service';
import { createAltchaCaptcha } from './modules/captcha/service';
import { identityCleanupJob } from './modules/identity/cleanup';
import { createMachines } from './modules/machines/service';
import { createCoursesService } from './modules/courses/service';
import { createEvents } from './modules/machines/events';
import { createMachineProvider } from './modules/machines/providers/registry';
import type { MachineProvider } from './modules/machines/providers/types';
import { createConnect } from './modules/connect/service';
import { createTimetable } from './modules/timetable/service';
import { createClassRunner, timetableJob, warmLeadMs } from './modules/timetable/job';
import { memoryCounters, postgresCounters, type Counters } from './lib/counters';
import { redisCounters } from './lib/counters-redis';

/** What the app is built from: configuration, the database, and (for tests) a clock, logging and outside services. */
export interface AppDeps {
  config: Config;
  database: Database;
  clock?: Clock;
  /** pino options, or false for silent (tests). */
  logger?: boolean | Record<string, unknown>;
  /** Test seams: outside services a test replaces (house rule 7). Filled by domain modules. */
  overrides?: Record<string, unknown>;
}

/** Where rate limits count: Redis when configured, else the shared database; memory for the embedded one. */
function createCounters(deps: AppDeps, log: FastifyBaseLogger): Counters {
  const clock = deps.clock ?? systemClock;
  if (deps.config.REDIS_URL) {
    // One deployment = one database: its name keeps the counters of deployments sharing a Redis apart.
    const namespace = deps.config.DATABASE_URL ? new URL(deps.config.DATABASE_URL).pathname.replace(/^\//, '') || 'postgres' : 'pglite';
    return redisCounters(deps.config.REDIS_URL, clock, log, namespace);
  }
  return deps.database.kind === 'postgres' ? postgresCounters(deps.database.db, clock) : memoryCounters(clock);
}

/** Builds every service once, in dependency order (house rule 1: factories receiving only what they use). */
export async function createContext(deps: AppDeps, log: FastifyBaseLogger): Promise<Ctx> {
  const clock = deps.clock ?? systemClock;
  const db = deps.database.db;
  const tokens = await createTokens(db, clock);
  const mailer = createMailer({
    database: deps.database,
    clock,
    log,
    from: deps.config.MAIL_FROM,
    transport: deps.config.SMTP_URL ? smtpTransport(deps.config.SMTP_URL) : null,
  });
  const captcha = await createAltchaCaptcha(db, clock);
  const ledger = createLedger(db);
  const catalog = createCatalog(db);
  const billing = await createBilling({ db, clock, config: deps.config, log, ledger, overrides: deps.overrides });
  const events = createEvents({ database: deps.database, log });
  const counters = createCounters(deps, log);
  const provider = (deps.overrides?.machineProvider as MachineProvider | undefined) ?? createMachineProvider(deps.config, log);
  const machines = createMachines({ database: deps.database, clock, log, ledger, events, provider });
  const connect = createConnect({ db, clock, log, idleStopMinutes: deps.config.IDLE_STOP_MINUTES, turn: { urls: deps.config.TURN_URLS, secret: deps.config.TURN_SECRET }, machines: machines.machines, ledger, events });
  const courses = createCoursesService({ db, clock, publicUrl: deps.config.publicUrl, inviteDailyLimit: deps.config.INVITE_DAILY_LIMIT, ledger, machines: machines.machines, events, mailer, billing });
  const warmMs = warmLeadMs(provider.kind);
  const timetable = createTimetable({ db, clock, events, warmMs });
  const ctx: Ctx = { config: deps.config, database: deps.database, db, clock, log, tokens, mailer, captcha, ledger, catalog, billing, machines: machines.machines, events, counters, connect, courses, timetable, jobs: [] };
  ctx.jobs.push(courses.job());
  ctx.jobs.push(connect.idleJob, connect.aliveJob);
  ctx.jobs.push(...machines.jobs);
  ctx.jobs.push(ledgerExpiryJob(ledger, clock), ...billing.jobs);
  ctx.jobs.push(hourAlertsJob(createHourAlerts({ db, mailer, clock, publicUrl: deps.config.publicUrl }), () => machines.machines.reconciler.isLeader()));
  const classRunner = createClassRunner({ db, clock, log, warmMs, machines: machines.machines, ledger, events, warn: (id, at, timeZone) => connect.gateway.warn(id, at, 'class-end', timeZone) });
  ctx.jobs.push(timetableJob(classRunner, () => machines.machines.reconciler.isLeader()));
  ctx.jobs.push(identityCleanupJob(db, clock));
  ctx.jobs.push({ name: 'rate-limit-cleanup', intervalMs: 60_000, runOnce: async () => void (await counters.sweep()) });
  if (mailer.sends) ctx.jobs.push({ name: 'mail', intervalMs: 10_000, runOnce: async () => void (await mailer.flush()) });
  return ctx;
}

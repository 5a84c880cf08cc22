import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config';
import type { Database, Db } from './db/client';
import type { Clock } from './lib/clock';
import type { Job } from './lib/jobs';
import type { Counters } from './lib/counters';
import type { Tokens } from './modules/identity/tokens';
import type { Ledger } from './modules/ledger/service';
import type { Catalog } from './modules/catalog/service';
import type { Billing } from './modules/billing/service';
import type { Mailer } from './modules/mail/service';
import type { Captcha } from './modules/captcha/service';
import type { Machines } from './modules/machines/service';
import type { Events } from './modules/machines/events';
import type { ConnectService } from './modules/connect/service';
import type { CoursesService } from './modules/courses/service';
import type { Timetable } from './modules/timetable/service';

/**
 * What every module receives: the shared infrastructure plus the services other modules expose.
 * Each domain adds its service here (one line) and builds it in services.ts.
 */
export interface Ctx {
  config: Config;
  database: Database;
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  tokens: Tokens;
  ledger: Ledger;
  catalog: Catalog;
  /** Payment provider registry, checkout and fulfilment. */
  billing: Billing;
  mailer: Mailer;
  captcha: Captcha;
  /** Machine lifecycle: start/stop requests, endpoints, the reconciler and metering. */
  machines: Machines;
  /** Push to signed-in users (GET /v1/user/events): in process, and through LISTEN/NOTIFY on PostgreSQL. */
  events: Events;
  /** Rate-limit counters: memory (PGlite), PostgreSQL, or Redis (REDIS_URL); shared by every replica. */
  counters: Counters;
  /** The desktop gateway (tickets, WebSocket relay) and idle protection. */
  connect: ConnectService;
  /** Classrooms: course packs, Start All / Stop All, rosters, seats (issue 7). */
  courses: CoursesService;
  /** Class timetable: each course's class sessions and everyone's next class (issue 22.1). */
  timetable: Timetable;
  /** Background loops (reconciler, metering, expiry, mail delivery); started by main.ts, stopped on close. */
  jobs: Job[];
}

import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../context';
import { contactRoutes } from './contact/routes';
import { identityRoutes } from './identity/routes';
import { captchaRoutes } from './captcha/routes';
import { catalogRoutes } from './catalog/routes';
import { billingRoutes } from './billing/routes';
import { walletRoutes } from './wallet/routes';
import { checkoutPages } from './billing/checkout-routes';
import { machinesRoutes } from './machines/routes';
import { connectRoutes } from './connect/routes';
import { connectFilesRoutes } from './connect/files-routes';
import { metricsPage } from './metrics/routes';
import { courseRoutes } from './courses/routes';
import { adminRoutes } from './admin/routes';
import { hoursRoutes } from './alerts/routes';
import { usageRoutes } from './usage/routes';
import { wallRoutes } from './wall/routes';
import { ssoRoutes } from './sso/routes';
import { timetableRoutes } from './timetable/routes';

/** The /v1 route modules, one per domain (each adds its line here). */
export async function registerModules(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  await identityRoutes(v1, ctx);
  await ssoRoutes(v1, ctx);
  await captchaRoutes(v1, ctx);
  await contactRoutes(v1, ctx);
  await catalogRoutes(v1, ctx);
  await billingRoutes(v1, ctx);
  await walletRoutes(v1, ctx);
  await hoursRoutes(v1, ctx);
  await usageRoutes(v1, ctx);
  await machinesRoutes(v1, ctx);
  await connectRoutes(v1, ctx);
  await connectFilesRoutes(v1, ctx);
  await courseRoutes(v1, ctx);
  await timetableRoutes(v1, ctx);
  await adminRoutes(v1, ctx);
  await wallRoutes(v1, ctx);
}

/** Pages served outside /v1 (the built-in payment provider's hosted checkout, /metrics); registered at the root. */
export async function registerPages(root: FastifyInstance, ctx: Ctx): Promise<void> {
  await checkoutPages(root, ctx);
  await metricsPage(root, ctx);
}

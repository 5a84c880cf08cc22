import { expect } from 'vitest';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { operatorCli, type RunningServer, uniqueEmail } from '../harness';
import type { Inbox } from '../inbox';
import { loginWithPopup, mailedLink, seedUser, type Account } from './auth-helpers';
import { payOnCheckout, PAYING_CARD } from './buy-helpers';
import { api } from './connect-helpers';

/**
 * What the classroom browser tests share: an instructor with a paid, started course signed in on their dashboard,
 * the course's list replaced through the upload call, and students whose address is verified.
 */
export function classroomKit(server: RunningServer, browser: Browser, inbox: Inbox) {
  /** The operator CLI beside the running server (on PGlite it runs the command inside the server, found via DATA_DIR). */
  async function grantInstructor(email: string): Promise<void> {
    expect(await operatorCli(server, 'grant', email, 'instructor')).toContain('now has the instructor claim');
  }

  async function signIn(account: Account, options: BrowserContextOptions = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
    const page = await context.newPage();
    await loginWithPopup(page, server.base, account.email, account.password);
    return page;
  }

  /**
   * An instructor with a paid German course of `vms` machines that has started (bought through the API and paid on
   * the hosted checkout page), signed in on their dashboard.
   */
  async function runningCourse(name: string, vms: number, options: BrowserContextOptions = {}): Promise<{ account: Account; teacher: Page; token: string; packId: string }> {
    const account = { name, email: uniqueEmail('instructor'), password: 'classroom42' };
    await seedUser(server.base, account);
    await grantInstructor(account.email);
    const { accessToken: token } = await api(server.base, 'POST', '/v1/auth/login', undefined, { email: account.email, password: account.password });
    const course = { Platform: 'Unreal Engine', VMs: vms, StartAt: Date.now() - 60_000, ExpiresAt: Date.now() + 7 * 86_400_000, Region: 'DE' };
    const { prices } = await api(server.base, 'POST', '/v1/pack/cost', token, course);
    const { url } = await api(server.base, 'POST', '/v1/pack/recharge', token, {
      ...course,
      TotalHours: 10,
      Price: prices['10'],
      success_url: `${server.base}/success`,
      cancel_url: `${server.base}/failed`,
    });
    const teacher = await signIn(account, options);
    await teacher.goto(url);
    // Leaving the success page at once may cut its session refresh short (the rotated cookie never stored): a
    // dashboard reloaded minutes later must still be signed in (sessions.ts answers the same new cookie again).
    await payOnCheckout(teacher, PAYING_CARD);
    await teacher.waitForURL(/\/success\?orderId=/, { timeout: 20_000 });
    await teacher.goto(`${server.base}/dashboard`);
    await teacher.getByRole('article').waitFor({ timeout: 30_000 });
    const { balance } = await api(server.base, 'GET', '/v1/user/wallet/balance', token);
    return { account, teacher, token, packId: balance[0].packId };
  }

  /** Replaces the course's student list through the upload call. */
  async function uploadList(token: string, packId: string, emails: string[]): Promise<void> {
    const fd = new FormData();
    fd.append('packId', packId);
    fd.append('attachment', new Blob([emails.join('\n')]), 'students.txt');
    const res = await fetch(`${server.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: token }, body: fd });
    expect(res.status).toBe(200);
  }

  /** A student on the course's list who verified their address (from the invitation-time mail), signed in. */
  async function verifiedStudent(name: string, token: string, packId: string, options: BrowserContextOptions = {}): Promise<{ account: Account; page: Page; token: string }> {
    const account = { name, email: uniqueEmail(name.split(' ')[0]!.toLowerCase()), password: 'student4242' };
    await seedUser(server.base, account);
    await uploadList(token, packId, [account.email]);
    const page = await signIn(account, options);
    await page.goto(await mailedLink(inbox, account.email, '/verify-email'));
    await page.getByRole('heading', { level: 1, name: 'E-mail address verified' }).waitFor({ timeout: 20_000 });
    const { accessToken } = await api(server.base, 'POST', '/v1/auth/login', undefined, { email: account.email, password: account.password });
    return { account, page, token: accessToken };
  }

  return { grantInstructor, signIn, runningCourse, uploadList, verifiedStudent };
}

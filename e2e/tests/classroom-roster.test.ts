import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { ARTIFACTS, operatorCli, snap, uniqueEmail } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { decodeQuotedPrintable, startInbox, type Inbox } from '../inbox';
import { mailedLink, seedUser, seriousViolations, type Account } from './auth-helpers';
import { payOnCheckout, PAYING_CARD, step } from './buy-helpers';
import { api } from './connect-helpers';
import { classroomKit } from './classroom-helpers';
import { operatorApiToken } from './operator-helpers';

/**
 * Classrooms an instructor can run (issue 22), in Chromium against the real server: course dates that read the same
 * on every page and in the invitation e-mail, whatever the browser's time zone; invitation links that open the
 * right account popup; students who never see buying controls; the student list one address at a time; Stop All
 * that asks first while students are connected.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

let inbox: Inbox;
beforeAll(async () => {
  inbox = await startInbox(decodeQuotedPrintable);
});
afterAll(async () => {
  await inbox?.close();
});
const t = useServerAndBrowser(() => ({ SMTP_URL: inbox.url }));

/** The classroom kit's steps (classroom-helpers.ts) on this file's server, browser and inbox. */
const kit = () => classroomKit(t.server, t.browser, inbox);
const grantInstructor = (email: string) => kit().grantInstructor(email);
const signIn = (account: Account, options: BrowserContextOptions = {}) => kit().signIn(account, options);
const runningCourse = (name: string, vms: number, options: BrowserContextOptions = {}) => kit().runningCourse(name, vms, options);
const uploadList = (token: string, packId: string, emails: string[]) => kit().uploadList(token, packId, emails);

/** The landing page link of an invitation e-mail. */
function invitationLink(mail: string): string {
  const link = /https?:\/\/\S+\/\?(?:login|signup)=1&email=\S+/.exec(mail)?.[0];
  expect(link).toBeTruthy();
  return link!;
}

/** An operator made with the README's `create-admin` line, made console-ready through the API: their id token. */
async function operatorToken(): Promise<string> {
  const email = uniqueEmail('operator');
  const stdout = await operatorCli(t.server, 'create-admin', email, 'Olga Operator');
  const password = /Password: (\S+)/.exec(stdout)![1]!;
  return (await operatorApiToken(t.server.base, email, password)).token; // new password, authenticator (issue 23.2)
}

/** The connect tab's address for a balance entry (spec §7: base64 of JSON {url, role, packId, machineName}). */
const connectHref = (e: { url: string; role: string; packId: string; machineName: string }) =>
  `${t.server.base}/connect#${Buffer.from(JSON.stringify({ url: e.url, role: e.role, packId: e.packId, machineName: e.machineName })).toString('base64')}`;

/** `YYYY-MM-DD` plus days, in calendar arithmetic. */
function plusDays(day: string, days: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Spec §9's `DD Mon 'YY` of a `YYYY-MM-DD` day. */
const specDate = (day: string) => `${day.slice(8, 10)} ${MONTHS[Number(day.slice(5, 7)) - 1]} '${day.slice(2, 4)}`;

/** A full-page screenshot from the top (the sticky header would otherwise sit mid-page). */
async function snapTop(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await snap(page, name);
}

/** What the window shows (an open dialog over the page). */
const snapView = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });

/** Text with its line breaks and runs of blanks as single spaces. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

/** The mails the inbox received for `email`, waiting until there are at least `n`. */
async function mailsTo(email: string, n = 1): Promise<string[]> {
  await expect.poll(() => inbox.mails.filter((m) => m.to.includes(email)).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(n);
  return inbox.mails.filter((m) => m.to.includes(email)).map((m) => m.raw);
}

it("shows a German course's dates the same in the setup, checkout, result page, dashboard and invitation, from a browser on UTC", { timeout: 240_000 }, async () => {
  const instructor = { name: 'Clara Zeit', email: uniqueEmail('tz-instructor'), password: 'timezone42' };
  await seedUser(t.server.base, instructor);
  await grantInstructor(instructor.email);
  // A browser west of the course's country: its local end of the end day is already the next day in Berlin.
  const teacher = await signIn(instructor, { timezoneId: 'UTC' });

  await teacher.goto(`${t.server.base}/setup`);
  await teacher.getByRole('heading', { level: 1, name: "Set up your company's Cloud Machines" }).waitFor({ timeout: 20_000 });
  await teacher.getByLabel('Country', { exact: true }).selectOption({ label: 'Germany' });
  await teacher.getByRole('button', { name: 'Confirm Country' }).click();
  await teacher.getByRole('radio', { name: /Unreal Engine/ }).check();
  await teacher.getByRole('button', { name: 'Confirm Platform' }).click();
  const details = step(teacher, 'Set your Course Details');
  const today = (await details.getByLabel('Start Date').getAttribute('min'))!;
  const first = plusDays(today, 1);
  const last = plusDays(today, 8);
  const dates = `${specDate(first)} - ${specDate(last)}`;
  await details.getByLabel('Concurrent Students').fill('2');
  await details.getByLabel('Start Date').fill(first);
  await details.getByLabel('End Date').fill(last);
  await details.getByRole('button', { name: 'Confirm Details' }).click();
  const summary = teacher.getByRole('complementary');
  await summary.getByText('Concurrent Students').waitFor();
  expect(flat(await summary.innerText())).toContain(`Course Dates ${dates}`);

  const runtime = step(teacher, 'Choose your Runtime');
  await runtime.getByRole('radio').first().check();
  await teacher.getByRole('button', { name: 'Confirm Runtime' }).click();
  await teacher.getByRole('button', { name: /^Pay .+ and get started$/ }).click();
  await teacher.waitForURL(/\/checkout\//, { timeout: 20_000 });
  expect(await teacher.getByLabel('Order summary').innerText()).toContain(dates);
  await snap(teacher, 'roster-01-checkout-dates');
  await payOnCheckout(teacher, PAYING_CARD);
  await teacher.waitForURL(/\/success\?orderId=/, { timeout: 20_000 });
  await expect.poll(() => teacher.getByText('Successful', { exact: true }).isVisible(), { timeout: 30_000 }).toBe(true);
  expect(flat(await teacher.getByRole('complementary').innerText())).toContain(`Course Dates ${dates}`);

  await teacher.goto(`${t.server.base}/dashboard`);
  const card = teacher.getByRole('article');
  await card.waitFor({ timeout: 30_000 });
  expect(flat(await card.getByLabel('Course details').innerText())).toContain(`Course Dates ${dates}`);
  expect(await card.getByRole('heading', { level: 2 }).innerText()).toBe(`Course ${specDate(first)}`);

  const student = uniqueEmail('tz-student');
  await card.getByLabel('Student list file (.csv or .txt)').setInputFiles({ name: 'students.txt', mimeType: 'text/plain', buffer: Buffer.from(`${student}\n`) });
  await card.getByRole('button', { name: 'Upload List' }).click();
  await card.getByRole('status').filter({ hasText: 'The student list was updated.' }).waitFor({ timeout: 20_000 });
  const [mail] = await mailsTo(student);
  expect(mail).toContain(`(${dates})`);
});

it('an invitation link opens Sign Up for a new address and Login for an address with an account, the address filled in', { timeout: 180_000 }, async () => {
  // The link invitations sent before carried: the Login popup opens.
  const earlier = await (await t.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await earlier.goto(`${t.server.base}/?login=1`);
  await expect.poll(() => earlier.getByRole('dialog', { name: 'Login' }).isVisible(), { timeout: 15_000 }).toBe(true);

  const { token, packId } = await runningCourse('Lina Link', 1);
  const member = { name: 'Mia Member', email: uniqueEmail('member'), password: 'member4242' };
  await seedUser(t.server.base, member);
  const newcomer = uniqueEmail('newcomer');
  await uploadList(token, packId, [member.email, newcomer]);

  // A new address: the Sign Up popup, with the invited address, and no address left in the address bar.
  const visitor = await (await t.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await visitor.goto(invitationLink((await mailsTo(newcomer))[0]!));
  const signup = visitor.getByRole('dialog', { name: 'Sign Up' });
  await expect.poll(() => signup.isVisible(), { timeout: 15_000 }).toBe(true);
  expect(await signup.getByLabel('Email', { exact: true }).inputValue()).toBe(newcomer);
  expect(new URL(visitor.url()).search).toBe('');
  await snap(visitor, 'roster-02-invitation-signup');

  // An address with an account (its sign-up mail came first): the Login popup; logging in lands on the dashboard.
  const memberMails = await mailsTo(member.email, 2);
  const link = invitationLink(memberMails.find((m) => m.includes('invited to'))!);
  expect(link).toContain('/?login=1&');
  const returning = await (await t.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await returning.goto(link);
  const login = returning.getByRole('dialog', { name: 'Login' });
  await expect.poll(() => login.isVisible(), { timeout: 15_000 }).toBe(true);
  expect(await login.getByLabel('Email', { exact: true }).inputValue()).toBe(member.email);
  await snap(returning, 'roster-03-invitation-login');
  await login.getByLabel('Password', { exact: true }).fill(member.password);
  await login.getByRole('button', { name: 'Login', exact: true }).click();
  await returning.waitForURL(`${t.server.base}/dashboard`, { timeout: 15_000 });

  // Signed in already, the same link goes to the dashboard.
  await returning.goto(link);
  await returning.waitForURL(`${t.server.base}/dashboard`, { timeout: 15_000 });
});

it('students see no buying controls: not while their address is unverified, not with their course, not when out of hours', { timeout: 180_000 }, async () => {
  const { account: instructor, token, packId } = await runningCourse('Sam Seats', 1);
  const student = { name: 'Stu Dent', email: uniqueEmail('student'), password: 'student4242' };
  await seedUser(t.server.base, student);
  await uploadList(token, packId, [student.email]);

  // Unverified: the course is not shown yet, and nothing offers a purchase.
  const page = await signIn(student);
  await page.getByText('Your course appears here once you verify your e-mail address.').waitFor({ timeout: 20_000 });
  const setupLink = page.locator('a[href="/setup"]');
  await page.getByText('Your course machine will be listed here').or(page.getByRole('link', { name: 'Configure your Set up' })).waitFor();
  expect(await page.getByRole('link', { name: 'Configure your Set up' }).count()).toBe(0);
  expect(await setupLink.count()).toBe(0);
  await snap(page, 'roster-04-student-unverified');

  // Verified: the course with Connect only, no "Buy more hours".
  await page.goto(await mailedLink(inbox, student.email, '/verify-email'));
  await page.getByRole('heading', { level: 1, name: 'E-mail address verified' }).waitFor({ timeout: 20_000 });
  await page.getByRole('link', { name: 'Go to Dashboard' }).click();
  await page.getByRole('article').getByRole('button', { name: 'Connect' }).waitFor({ timeout: 20_000 });
  await page.getByText('Connect once your Instructor has started the machines.').waitFor();
  expect(await page.getByRole('link', { name: 'Buy more hours' }).count()).toBe(0);
  expect(await setupLink.count()).toBe(0);
  await snap(page, 'roster-05-student-course');

  // The operator takes the course machine's hours: the student's connect tab asks them to see their Instructor.
  const admin = await operatorToken();
  const fleet = await api(t.server.base, 'GET', `/v1/admin/fleet?q=${encodeURIComponent(instructor.email)}`, admin);
  expect(fleet.items).toHaveLength(1);
  await api(t.server.base, 'POST', '/v1/admin/adjustments', admin, { machineId: fleet.items[0].id, minutes: -600, reason: 'Test: hours used up' });
  const { accessToken } = await api(t.server.base, 'POST', '/v1/auth/login', undefined, { email: student.email, password: student.password });
  const [entry] = (await api(t.server.base, 'GET', '/v1/user/wallet/balance', accessToken)).balance;
  expect(entry.role).toBe('STUDENT');
  const tab = await page.context().newPage();
  await tab.goto(connectHref(entry));
  await tab.getByRole('heading', { name: "You're out of hours" }).waitFor({ timeout: 20_000 });
  await tab.getByText('Please ask your Instructor for more hours.').waitFor();
  expect(await tab.getByRole('link', { name: 'Top up hours' }).count()).toBe(0);
  await snap(tab, 'roster-06-student-out-of-hours');
});

it('the instructor sees each address with its state, adds one, is told when a resend is too soon, and removes one', { timeout: 180_000 }, async () => {
  const { teacher, token, packId } = await runningCourse('Rosa Roster', 2, { bypassCSP: true }); // axe-core is injected below
  // One student signed up and verified their address; another address has no account yet.
  const vera = { name: 'Vera Verified', email: uniqueEmail('vera'), password: 'student4242' };
  await seedUser(t.server.base, vera);
  const veraPage = await signIn(vera);
  await veraPage.goto(await mailedLink(inbox, vera.email, '/verify-email'));
  await veraPage.getByRole('heading', { level: 1, name: 'E-mail address verified' }).waitFor({ timeout: 20_000 });
  const pending = uniqueEmail('pending');
  await uploadList(token, packId, [vera.email, pending]);

  // The dashboard hears of the upload and lists both addresses with how far each got.
  const card = teacher.getByRole('article');
  const list = card.getByRole('region', { name: 'Student List' });
  const row = (email: string) => list.getByRole('row').filter({ has: teacher.getByRole('rowheader', { name: email }) });
  await row(pending).waitFor({ timeout: 20_000 });
  await list.getByText('2 students on the list.').waitFor();
  expect(flat(await row(pending).innerText())).toMatch(/Invited Invitation sent \d{2} [A-Z][a-z]{2} '\d{2} —/);
  expect(flat(await row(vera.email).innerText())).toContain('Verified —');
  // Resend for an address that has not got in yet; Remove for every address.
  expect(await row(pending).getByRole('button').allInnerTexts()).toEqual(['Resend', 'Remove']);
  expect(await row(vera.email).getByRole('button').allInnerTexts()).toEqual(['Remove']);

  // Add one address: on the list and invited.
  const newcomer = uniqueEmail('newcomer');
  await list.getByLabel('Add a student').fill(newcomer);
  await list.getByRole('button', { name: 'Add Student' }).click();
  await list.getByRole('status').filter({ hasText: `${newcomer} was added and invited by e-mail.` }).waitFor({ timeout: 20_000 });
  await row(newcomer).waitFor();
  await list.getByText('3 students on the list.').waitFor();
  expect((await mailsTo(newcomer))[0]).toContain('/?signup=1&email=');
  await list.getByLabel('Add a student').fill(newcomer);
  await list.getByRole('button', { name: 'Add Student' }).click();
  await list.getByRole('alert').filter({ hasText: `${newcomer} is already on the student list.` }).waitFor();
  await snapTop(teacher, 'roster-07-student-list');

  // Resend respects once a day per address.
  await list.getByRole('button', { name: `Resend invitation to ${pending}` }).click();
  await list.getByRole('alert').filter({ hasText: `${pending} was invited less than a day ago.` }).waitFor();

  // Remove asks first, then the address is gone.
  await list.getByRole('button', { name: `Remove ${newcomer}` }).click();
  const confirm = teacher.getByRole('dialog', { name: 'Remove student?' });
  await confirm.waitFor();
  await snapView(teacher, 'roster-08-remove-confirm');
  await confirm.getByRole('button', { name: 'Remove', exact: true }).click();
  await list.getByRole('status').filter({ hasText: `${newcomer} was removed from the list.` }).waitFor();
  await expect.poll(() => row(newcomer).count()).toBe(0);
  await list.getByText('2 students on the list.').waitFor();
  const { students } = await api(t.server.base, 'GET', `/v1/pack/roster?packId=${packId}`, token);
  expect(students.map((x: { email: string }) => x.email).sort()).toEqual([pending, vera.email].sort());

  expect(await seriousViolations(teacher)).toEqual([]);
  await teacher.setViewportSize({ width: 390, height: 844 });
  await snapTop(teacher, 'roster-09-student-list-narrow');
  await list.screenshot({ path: path.join(ARTIFACTS, 'roster-10-student-list-narrow-part.png') });
  expect(await teacher.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
});

it('Stop All asks first while students are connected, and stops at once when nobody is', { timeout: 300_000 }, async () => {
  const { teacher, token, packId } = await runningCourse('Stella Stop', 1);
  const student = { name: 'Connie Connected', email: uniqueEmail('connie'), password: 'student4242' };
  await seedUser(t.server.base, student);
  await uploadList(token, packId, [student.email]);
  const studentPage = await signIn(student);
  await studentPage.goto(await mailedLink(inbox, student.email, '/verify-email'));
  await studentPage.getByRole('heading', { level: 1, name: 'E-mail address verified' }).waitFor({ timeout: 20_000 });
  const { accessToken: studentToken } = await api(t.server.base, 'POST', '/v1/auth/login', undefined, { email: student.email, password: student.password });

  const card = teacher.getByRole('article');
  const startAll = card.getByRole('button', { name: 'Start All' });
  const stopAll = card.getByRole('button', { name: 'Stop All' });
  const stopCalls: string[] = [];
  teacher.on('request', (r) => {
    if (r.url().endsWith('/v1/pack/stop')) stopCalls.push(r.url());
  });

  // The student takes the seat (their connect asks for a ticket while the machine starts): connected now.
  await startAll.click();
  await expect.poll(() => stopAll.isEnabled(), { timeout: 30_000 }).toBe(true);
  const ticket = await fetch(`${t.server.base}/v1/slot/connect/ticket`, {
    method: 'POST',
    headers: { idtoken: studentToken, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `/v1/slot/connect?packId=${packId}` }),
  });
  expect([200, 409]).toContain(ticket.status);
  await teacher.reload();
  const seatsTable = card.getByRole('region', { name: /^Machines of / });
  await seatsTable.getByText(student.email).waitFor({ timeout: 20_000 });
  const listRow = card.getByRole('region', { name: 'Student List' }).getByRole('row').filter({ has: teacher.getByRole('rowheader', { name: student.email }) });
  await listRow.getByText('Connected now').waitFor({ timeout: 20_000 });

  // Stop All asks; Cancel stops nothing.
  await stopAll.click();
  const confirm = teacher.getByRole('dialog', { name: 'Stop all machines?' });
  await confirm.getByText('1 student is connected now.', { exact: false }).waitFor();
  await snapView(teacher, 'roster-11-stop-all-confirm');
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await confirm.waitFor({ state: 'detached' });
  expect(stopCalls).toEqual([]);
  expect(await stopAll.isEnabled()).toBe(true);

  // Confirmed: every machine stops and the seat is free.
  await stopAll.click();
  await confirm.getByRole('button', { name: 'Stop All' }).click();
  await expect.poll(() => stopAll.isDisabled(), { timeout: 60_000 }).toBe(true);
  expect(stopCalls).toHaveLength(1);
  await seatsTable.getByText('Free').waitFor({ timeout: 20_000 });

  // Nobody connected: Stop All stops at once.
  await expect.poll(() => startAll.getAttribute('aria-disabled'), { timeout: 30_000 }).toBeNull();
  await startAll.click();
  await expect.poll(() => stopAll.isEnabled(), { timeout: 30_000 }).toBe(true);
  await stopAll.click();
  await expect.poll(() => stopCalls.length, { timeout: 10_000 }).toBe(2);
  expect(await teacher.getByRole('dialog').count()).toBe(0);
  await expect.poll(() => stopAll.isDisabled(), { timeout: 60_000 }).toBe(true);
});

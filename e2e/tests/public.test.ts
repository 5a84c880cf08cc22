import { describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { seriousViolations } from './auth-helpers';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';

/** Every public page, its h1 and a phrase its content must carry. */
const PAGES = [
  { route: '/', slug: 'landing', h1: 'A high-end Unreal Engine machine, right in your browser', text: 'Skip the $2,500 upgrade' },
  { route: '/HyperRender', slug: 'hyperrender', h1: 'HyperRender: your own Unreal Engine workstation in the cloud', text: 'How your hours work' },
  { route: '/SwiftShader', slug: 'swiftshader', h1: 'SwiftShader: a GPU lab for your whole class, in the browser', text: '1 to 40 students' },
  { route: '/faqs', slug: 'faqs', h1: 'FAQs and Help', text: 'General' },
  { route: '/terms', slug: 'terms', h1: 'Terms of Service', text: 'Hours, expiry and top-ups' },
  { route: '/privacy', slug: 'privacy', h1: 'Privacy Policy', text: 'What we collect' },
  { route: '/refund-policy', slug: 'refund-policy', h1: 'Refund Policy', text: 'Unused packs' },
  { route: '/about', slug: 'about', h1: 'About Hyperdesk', text: 'Why we built it' },
];

const t = useServerAndBrowser();

async function newPage(width: number, height = 900): Promise<Page> {
  // bypassCSP lets the test inject axe-core; the app itself runs under its normal CSP otherwise.
  const context = await t.newContext({ viewport: { width, height }, bypassCSP: true });
  return context.newPage();
}

async function open(page: Page, route: string, h1: string) {
  await page.goto(t.server.base + route);
  await page.getByRole('heading', { level: 1, name: h1 }).waitFor({ timeout: 20_000 });
}

describe('public pages', () => {
  for (const width of [375, 1440]) {
    it(`render at ${width} px with a title, a description, no overflow and no serious axe violations`, async () => {
      const page = await newPage(width);
      const titles = new Set<string>();
      for (const p of PAGES) {
        await open(page, p.route, p.h1);
        await page.getByText(p.text, { exact: true }).first().waitFor();
        const title = await page.title();
        const description = await page.locator('meta[name="description"]').getAttribute('content');
        expect(title).toMatch(/Hyperdesk/);
        expect(description?.length ?? 0).toBeGreaterThan(60);
        titles.add(title);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${p.route} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
        await snap(page, `public-${p.slug}-${width}`);
        expect(await seriousViolations(page), `${p.route} at ${width} px`).toEqual([]);
      }
      expect(titles.size).toBe(PAGES.length);
    });
  }

  it('the landing page has the spec’s sections, figures and footer links', async () => {
    const page = await newPage(1440);
    await open(page, '/', PAGES[0]!.h1);
    for (const heading of ['Training', 'Production', 'Practicing', 'Skip the $2,500 upgrade']) {
      await expect(page.getByRole('heading', { name: heading, exact: true }).isVisible()).resolves.toBe(true);
    }
    const body = await page.locator('main').innerText();
    expect(body).toContain('roughly 4% of that');
    expect(body).toContain('2 mbps');
    expect(body).toContain('Chrome');
    expect(body).toContain('within 5 minutes of payment');
    const header = page.getByRole('banner');
    for (const name of ['HyperRender', 'SwiftShader']) await header.getByRole('link', { name, exact: true }).waitFor();
    await header.getByRole('button', { name: 'Contact Us', exact: true }).waitFor();
    await header.getByRole('button', { name: 'Login', exact: true }).waitFor();

    const footer = page.getByRole('contentinfo');
    const links: [string, string, string][] = [
      ['Terms of Service', '/terms', 'Terms of Service'],
      ['Privacy Policy', '/privacy', 'Privacy Policy'],
      ['Refund Policy', '/refund-policy', 'Refund Policy'],
      ['About', '/about', 'About Hyperdesk'],
    ];
    for (const [name, route, h1] of links) {
      await open(page, '/', PAGES[0]!.h1);
      await footer.getByRole('link', { name, exact: true }).click();
      await page.waitForURL(t.server.base + route);
      await page.getByRole('heading', { level: 1, name: h1 }).waitFor();
    }
  });

  it('Get started opens the Sign Up popup for visitors', async () => {
    const page = await newPage(375);
    await open(page, '/', PAGES[0]!.h1);
    await page.getByRole('main').getByRole('button', { name: 'Get started' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Sign Up' });
    await dialog.waitFor();
    await snap(page, 'public-landing-get-started-375');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it('the FAQ accordion works with the keyboard and answers the expiry question', async () => {
    const page = await newPage(1440);
    await open(page, '/faqs', 'FAQs and Help');
    await page.getByRole('heading', { level: 2, name: 'General' }).waitFor();
    const questions = page.getByRole('main').getByRole('button', { expanded: false });
    expect(await questions.count()).toBeGreaterThanOrEqual(10);
    for (const q of ['What is a Cloud Machine?', 'How does it work?', 'Do unused hours expire?', 'Can I add more hours later?', "Do my computer's specifications matter?"]) {
      await page.getByRole('button', { name: q, exact: true }).waitFor();
    }
    const expiry = page.getByRole('button', { name: 'Do unused hours expire?' });
    await expiry.focus();
    await page.keyboard.press('Enter');
    await expect(expiry.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.getByText('do not carry forward', { exact: false }).first().waitFor();
    await page.keyboard.press('ArrowDown');
    const focused = await page.evaluate(() => document.activeElement?.textContent);
    expect(focused).toBe('Can I add more hours later?');
    await page.keyboard.press('Space');
    await page.getByText('you can top up anytime', { exact: false }).waitFor();
    await snap(page, 'public-faqs-open-1440');
    await page.keyboard.press('Space');
    await page.getByText('you can top up anytime', { exact: false }).waitFor({ state: 'hidden' });
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('keeps the landing page’s initial JS within 120 kB gzip', async () => {
    const page = await newPage(1440);
    const scripts = new Set<string>();
    page.on('response', (r) => {
      if (r.request().resourceType() === 'script') scripts.add(new URL(r.url()).pathname);
    });
    await open(page, '/', PAGES[0]!.h1);
    await page.waitForLoadState('networkidle');
    expect(scripts.size).toBeGreaterThan(0);
    let gz = 0;
    for (const s of scripts) gz += gzipSync(Buffer.from(await (await fetch(t.server.base + s)).arrayBuffer()), { level: 9 }).length;
    console.log(`landing initial JS: ${scripts.size} files, ${(gz / 1024).toFixed(1)} KiB gzip`);
    expect(gz).toBeLessThanOrEqual(120 * 1024);
    // The popups' code (altcha, dialogs, accordion) is not part of it.
    expect([...scripts].some((s) => /altcha|ContactDialog|SignupDialog|FaqList/.test(s))).toBe(false);
  });
});

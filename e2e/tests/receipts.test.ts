import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ARTIFACTS, snap } from '../harness';
import { pastTheEdge, useServerAndBrowser } from './suite-helpers';
import { buyer } from './connect-helpers';

/**
 * Receipts and usage history (issue 22.4), in Chromium against the real server: after paying on the hosted checkout
 * page the user finds the receipt under the user menu, with the UK's 20% VAT included, prints it and downloads its
 * PDF; the machine card's Usage history opens the runs and downloads them as CSV.
 */

const t = useServerAndBrowser();

it('a buyer opens the receipt of their order with its VAT line, downloads the PDF, and reads the usage history as CSV', { timeout: 240_000 }, async () => {
  const b = await buyer(t.browser, t.server.base, 'Rhea Receipt');
  const page = b.page;
  await page.goto(`${t.server.base}/dashboard`);
  await page.getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Receipts' }).click();
  await page.getByRole('heading', { level: 1, name: 'Receipts' }).waitFor();
  // The list's row, not the receipt page's line with the same description (waiting on that one after "All receipts"
  // let the test read a row that navigation was removing).
  const row = page.getByRole('region', { name: 'Receipts' }).getByRole('row').filter({ hasText: 'hours of Unreal Engine machine time, United Kingdom' });
  await row.waitFor();
  await snap(page, 'receipts-01-list');

  await row.getByRole('link', { name: /^HD-[0-9A-F]{8}$/ }).click();
  const receipt = page.getByRole('article', { name: /^Receipt HD-/ });
  await receipt.waitFor();
  const text = await receipt.innerText();
  expect(text).toContain('Rhea Receipt');
  expect(text).toMatch(/VAT 20% included\s+£ [\d.,]+/);
  expect(text).toMatch(/Total paid\s+£ [\d.,]+/);
  await snap(page, 'receipts-02-receipt');

  const [pdf] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PDF' }).click()]);
  expect(pdf.suggestedFilename()).toMatch(/^hyperdesk-receipt-HD-[0-9A-F]{8}\.pdf$/);
  const pdfPath = path.join(ARTIFACTS, pdf.suggestedFilename());
  await pdf.saveAs(pdfPath);
  expect(readFileSync(pdfPath).subarray(0, 5).toString()).toBe('%PDF-');

  // On a phone: the receipt and the list fit the screen, the total beside each receipt's number (the list's Total
  // column was past the card's edge and the e-mail address widened the page before).
  await page.setViewportSize({ width: 360, height: 740 });
  await snap(page, 'receipts-04-receipt-phone');
  expect(await pastTheEdge(page)).toEqual([]);
  await page.getByRole('link', { name: 'All receipts' }).click();
  await row.waitFor();
  const [number, total] = await Promise.all([row.getByRole('rowheader').boundingBox(), row.getByRole('cell').last().boundingBox()]);
  expect(await row.getByRole('cell').last().innerText()).toMatch(/^£ [\d.,]+$/);
  expect(Math.abs(number!.y - total!.y)).toBeLessThan(8); // the total on the number's line
  await snap(page, 'receipts-05-list-phone');
  expect(await pastTheEdge(page)).toEqual([]);
  await page.setViewportSize({ width: 1280, height: 900 });

  // Usage history from the machine card: nothing has run yet, and the CSV has its header.
  await page.goto(`${t.server.base}/dashboard`);
  await page.getByRole('article').getByRole('button', { name: 'Usage history' }).click();
  const dialog = page.getByRole('dialog', { name: `Usage of ${b.machineName}` });
  await dialog.getByText('Nothing has run yet.').waitFor();
  await snap(page, 'receipts-03-usage');
  const [csv] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Download CSV' }).click()]);
  const csvPath = path.join(ARTIFACTS, csv.suggestedFilename());
  await csv.saveAs(csvPath);
  expect(readFileSync(csvPath, 'utf8')).toBe('machine,start,end,hours\r\n');
});

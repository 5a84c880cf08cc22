/**
 * A receipt as a PDF (pdfkit, its built-in Helvetica: no font files to ship). Amounts are written with the
 * currency's code, since the built-in fonts have no ₹ glyph.
 */
import PDFDocument from 'pdfkit';
import { formatCourseDate, type Receipt } from '@hyperdesk/contract';

const money = (n: number, currency: string) => `${currency} ${n.toFixed(2)}`;

export function receiptPdf(r: Receipt, seller: { name: string; url: string }): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: 56, info: { Title: `Receipt ${r.number}`, Author: seller.name } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.fontSize(20).font('Helvetica-Bold').text(seller.name);
  doc.fontSize(10).font('Helvetica').fillColor('#555').text(seller.url).moveDown(2);
  doc.fillColor('#000').fontSize(16).font('Helvetica-Bold').text(`Receipt ${r.number}`).moveDown(0.5);
  doc.fontSize(10).font('Helvetica');
  const line = (label: string, value: string) => doc.font('Helvetica-Bold').text(`${label}: `, { continued: true }).font('Helvetica').text(value);
  line('Date paid', formatCourseDate(r.paidAt, r.region));
  line('Billed to', `${r.customer.name} <${r.customer.email}>`);
  if (r.paymentMethod) line('Paid with', r.paymentMethod);
  line('Order', r.orderId);
  doc.moveDown(1.5);
  doc.font('Helvetica-Bold').text('Description').font('Helvetica').text(r.description).moveDown(1);
  line(`${r.taxLabel} ${Math.round(r.taxRate * 100)}% included`, money(r.tax, r.currency));
  line('Total paid', money(r.total, r.currency));
  doc.moveDown(2).fillColor('#555').text('Thank you. Prices include the tax shown.');
  doc.end();
  return done;
}

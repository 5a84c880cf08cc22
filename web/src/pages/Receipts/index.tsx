import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { countryById, formatCourseDate, type Receipt } from '@hyperdesk/contract';
import { receiptPdf, receiptQuery, receiptsQuery } from '../../api/usage';
import { AppLayout } from '../../components/AppLayout';
import { Spinner } from '../../components/Spinner';
import { formatMoneyIn } from '../../lib/format';
import { saveFile } from '../../lib/save-file';
import styles from './Receipts.module.css';

const taxLine = (r: Receipt) => `${r.taxLabel} ${Math.round(r.taxRate * 100)}% included`;

function PdfButton({ orderId }: { orderId: string }) {
  const pdf = useMutation({ mutationFn: () => receiptPdf(orderId), onSuccess: ({ blob, filename }) => saveFile(blob, filename) });
  return (
    <>
      <button type="button" className={styles.button} disabled={pdf.isPending} onClick={() => pdf.mutate()}>
        Download PDF
      </button>
      {pdf.isError ? <span role="alert">{pdf.error.message}</span> : null}
    </>
  );
}

/** /receipts: one line per paid order, each with its printable receipt and PDF (issue 22.4). */
function ReceiptList() {
  const receipts = useQuery(receiptsQuery);
  return (
    <AppLayout title="Receipts">
      <section className={styles.card} aria-label="Receipts" aria-busy={receipts.isPending}>
        {receipts.isPending ? <Spinner /> : null}
        {receipts.isError ? <p role="alert">{receipts.error.message}</p> : null}
        {receipts.data?.receipts.length === 0 ? <p className={styles.muted}>No orders yet: your receipts appear here once you buy hours.</p> : null}
        {receipts.data?.receipts.length ? (
          <div className={styles.tableWrap}>
            <table className={styles.table}>
              <thead>
                <tr>
                  <th scope="col">Receipt</th>
                  <th scope="col">Date</th>
                  <th scope="col">Description</th>
                  <th scope="col" className={styles.amount}>
                    Total
                  </th>
                </tr>
              </thead>
              <tbody>
                {receipts.data.receipts.map((r) => (
                  <tr key={r.orderId}>
                    <th scope="row" className={styles.number}>
                      <Link className={styles.link} to={`/receipts/${r.orderId}`}>
                        {r.number}
                      </Link>
                    </th>
                    <td className={styles.date}>{formatCourseDate(r.paidAt, r.region)}</td>
                    <td className={styles.what}>{r.description}</td>
                    <td className={styles.amount}>{formatMoneyIn(r.total, r.region)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </AppLayout>
  );
}

/** /receipts/:orderId: the receipt as a page to print, with its PDF. */
function ReceiptPage({ orderId }: { orderId: string }) {
  const receipt = useQuery(receiptQuery(orderId));
  const r = receipt.data;
  return (
    <AppLayout title="Receipt">
      {receipt.isPending ? <Spinner /> : null}
      {receipt.isError ? <p role="alert">{receipt.error.message}</p> : null}
      {r ? (
        <>
          <article className={styles.receipt} aria-label={`Receipt ${r.number}`}>
            <h2>Hyperdesk</h2>
            <p className={styles.muted}>{window.location.origin}</p>
            <h3>Receipt {r.number}</h3>
            <dl className={styles.facts}>
              <dt>Date paid</dt>
              <dd>{formatCourseDate(r.paidAt, r.region)}</dd>
              <dt>Billed to</dt>
              <dd>
                {r.customer.name} &lt;{r.customer.email}&gt;
              </dd>
              {r.paymentMethod ? (
                <>
                  <dt>Paid with</dt>
                  <dd>{r.paymentMethod}</dd>
                </>
              ) : null}
              <dt>Country</dt>
              <dd>{countryById(r.region)?.label ?? r.region}</dd>
            </dl>
            <table className={styles.lines}>
              <tbody>
                <tr>
                  <td>{r.description}</td>
                  <td className={styles.amount}>{formatMoneyIn(r.total, r.region)}</td>
                </tr>
                <tr>
                  <td>{taxLine(r)}</td>
                  <td className={styles.amount}>{formatMoneyIn(r.tax, r.region)}</td>
                </tr>
                <tr className={styles.total}>
                  <td>Total paid</td>
                  <td className={styles.amount}>{formatMoneyIn(r.total, r.region)}</td>
                </tr>
              </tbody>
            </table>
          </article>
          <div className={`${styles.buttons} ${styles.noPrint}`}>
            <button type="button" className={styles.button} onClick={() => window.print()}>
              Print
            </button>
            <PdfButton orderId={r.orderId} />
            <Link className={styles.button} to="/receipts">
              All receipts
            </Link>
          </div>
        </>
      ) : null}
    </AppLayout>
  );
}

export default function Receipts() {
  const { orderId } = useParams();
  return orderId ? <ReceiptPage orderId={orderId} /> : <ReceiptList />;
}

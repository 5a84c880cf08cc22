import type { CardInput } from './providers/cards';
import type { BuiltinSession } from './providers/builtin';

/**
 * The built-in provider's hosted checkout page: plain server-rendered HTML, one stylesheet file, no script (the
 * CSP forbids inline scripts and a form needs none).
 */

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function formatAmount(minor: number, currency: string): string {
  return new Intl.NumberFormat('en-GB', { style: 'currency', currency }).format(minor / 100);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="/favicon.ico" sizes="16x16 32x32 48x48">
<title>${esc(title)} · Hyperdesk Checkout</title>
<link rel="stylesheet" href="/checkout/assets/checkout.css">
</head>
<body>
${body}
</body>
</html>`;
}

function summary(s: BuiltinSession): string {
  return `<section class="summary" aria-label="Order summary">
  <p class="merchant">Hyperdesk</p>
  <p class="label">Pay Hyperdesk</p>
  <p class="amount" data-testid="amount">${esc(formatAmount(s.amountMinor, s.currency))}</p>
  <p class="item">${esc(s.description)}</p>
  <p class="testmode"><span class="badge">Test mode</span> Pay with the test card 4242 4242 4242 4242, any future expiry date and any CVC. The card 4000 0000 0000 0002 is declined.</p>
</section>`;
}

export function checkoutPage(s: BuiltinSession, opts: { error?: string; values?: Partial<CardInput> } = {}): string {
  const v = opts.values ?? {};
  const retry = !opts.error && (s.status === 'declined' || s.status === 'cancelled');
  const notice = opts.error
    ? `<p class="error" role="alert" id="form-error">${esc(opts.error)}</p>`
    : retry
      ? `<p class="notice" role="status">Your last payment did not go through. You can try again with another card.</p>`
      : '';
  const invalid = opts.error ? ' aria-describedby="form-error"' : '';
  const amount = esc(formatAmount(s.amountMinor, s.currency));
  const action = `/checkout/${encodeURIComponent(s.id)}`;
  return layout(
    'Pay',
    `<main class="checkout">
${summary(s)}
<section class="pay">
  <h1>Pay with card</h1>
  ${notice}
  <form method="post" action="${action}/pay" novalidate>
    <label for="number">Card number</label>
    <input id="number" name="number" inputmode="numeric" autocomplete="cc-number" placeholder="1234 1234 1234 1234" maxlength="23" required value="${esc(v.number ?? '')}"${invalid}>
    <div class="row">
      <div>
        <label for="exp">Expiry (MM/YY)</label>
        <input id="exp" name="exp" inputmode="numeric" autocomplete="cc-exp" placeholder="MM/YY" maxlength="7" required value="${esc(v.exp ?? '')}">
      </div>
      <div>
        <label for="cvc">CVC</label>
        <input id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" placeholder="CVC" maxlength="4" required>
      </div>
    </div>
    <label for="name">Name on card</label>
    <input id="name" name="name" autocomplete="cc-name" maxlength="100" required value="${esc(v.name ?? '')}">
    <button type="submit" class="primary">Pay ${amount}</button>
  </form>
  <form method="post" action="${action}/cancel" class="cancel">
    <button type="submit" class="link">Cancel and return to Hyperdesk</button>
  </form>
</section>
</main>`,
  );
}

export function expiredPage(s: BuiltinSession): string {
  return layout(
    'Checkout expired',
    `<main class="checkout">
${summary(s)}
<section class="pay">
  <h1>This checkout has expired</h1>
  <p>Nothing was charged. Start again from Hyperdesk to buy hours.</p>
  <a class="primary" href="${esc(s.cancelUrl)}">Return to Hyperdesk</a>
</section>
</main>`,
  );
}

export function missingPage(): string {
  return layout(
    'Checkout not found',
    `<main class="checkout single">
<section class="pay">
  <h1>Checkout not found</h1>
  <p>This payment link is not valid. Start again from Hyperdesk to buy hours.</p>
  <a class="primary" href="/setup">Go to Hyperdesk</a>
</section>
</main>`,
  );
}

export const CHECKOUT_CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1f36;background:#f6f8fb}
.checkout{display:grid;grid-template-columns:1fr 1fr;min-height:100vh}
.checkout.single{grid-template-columns:1fr}
.summary{background:#0f172a;color:#e2e8f0;padding:64px 48px}
.merchant{font-weight:700;letter-spacing:.02em;margin:0 0 48px}
.label{margin:0;color:#94a3b8}
.amount{font-size:40px;font-weight:700;margin:4px 0 8px;color:#fff}
.item{margin:0 0 32px}
.testmode{font-size:14px;color:#cbd5e1;max-width:420px}
.badge{display:inline-block;background:#f59e0b;color:#111827;border-radius:4px;padding:0 6px;font-weight:700;font-size:12px;margin-right:6px}
.pay{padding:64px 48px;max-width:520px}
.pay h1{font-size:22px;margin:0 0 24px}
label{display:block;font-size:14px;font-weight:600;margin:16px 0 6px}
input{width:100%;padding:10px 12px;font:inherit;border:1px solid #cbd5e1;border-radius:6px;background:#fff}
input:focus{outline:2px solid #4f46e5;outline-offset:1px;border-color:#4f46e5}
.row{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.primary{display:block;width:100%;margin-top:24px;padding:12px;border:0;border-radius:6px;background:#4f46e5;color:#fff;font:inherit;font-weight:600;text-align:center;text-decoration:none;cursor:pointer}
.primary:hover{background:#4338ca}
.cancel{margin-top:16px;text-align:center}
.link{background:none;border:0;color:#4f46e5;font:inherit;text-decoration:underline;cursor:pointer;padding:4px}
.error{background:#fef2f2;color:#991b1b;border:1px solid #fecaca;border-radius:6px;padding:10px 12px;margin:0 0 8px}
.notice{background:#fffbeb;color:#92400e;border:1px solid #fde68a;border-radius:6px;padding:10px 12px;margin:0 0 8px}
@media (max-width:800px){.checkout{grid-template-columns:1fr}.summary,.pay{padding:32px 24px}.merchant{margin-bottom:24px}}
`;

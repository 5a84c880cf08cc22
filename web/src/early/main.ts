import { dialEarly } from './dial';

/**
 * The Connect tab's first script. Built into index.html as an inline script (vite.config.ts earlyScript), so it runs
 * while the page is parsed, before any of the app's code has even been fetched over a slow link.
 */
performance.mark('hyperdesk:early-script');
// The dashboard opens this tab with its opener (so it shares the dashboard's renderer process): read once for the
// ticket the dashboard holds (early/ticketChannel.ts), then dropped, so the tab cannot reach or navigate it.
const opener: unknown = window.opener;
if (opener) window.opener = null;
dialEarly(opener);
// The Connect page's own code is fetched too, not once the app has started: the built page names its files on this
// script (data-connect; the dev server does not). Asked for once the page is parsed, behind the app's own scripts,
// which the page needs first.
const files = (document.currentScript as HTMLScriptElement | null)?.dataset.connect;
if (location.pathname === '/connect' && files) {
  const preload = () => {
    for (const href of (JSON.parse(files) as string[]).filter((f) => f.endsWith('.js'))) {
      const link = document.createElement('link');
      link.rel = 'modulepreload';
      link.crossOrigin = '';
      link.href = href;
      document.head.append(link);
    }
  };
  if (document.readyState === 'loading') document.addEventListener('readystatechange', preload, { once: true });
  else preload();
}

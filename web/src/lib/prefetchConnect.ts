/**
 * The Connect page's files (its scripts and stylesheet: the build names them on the page's first script, vite.config.ts
 * connectFiles) fetched into the browser's cache while the dashboard is idle, so a Connect tab opened later takes none
 * of them over the user's link while it dials the desktop: on a 2 Mbit/s link they were 20 of the 26 kB a Connect tab
 * fetched while its socket opened (bench:stream's tab line). Once a page; the dev server names no files.
 */
let asked = false;

export function prefetchConnectPage(): void {
  if (asked) return;
  asked = true;
  const files = document.querySelector<HTMLScriptElement>('script[data-connect]')?.dataset.connect;
  if (!files) return;
  const add = () => {
    for (const href of JSON.parse(files) as string[]) {
      const link = document.createElement('link');
      link.rel = 'prefetch';
      link.crossOrigin = ''; // as the tab asks for them (module scripts, and Vite's stylesheet links)
      link.href = href;
      document.head.append(link);
    }
  };
  if (typeof window.requestIdleCallback === 'function') window.requestIdleCallback(add, { timeout: 3000 });
  else setTimeout(add, 500);
}

import { Link } from 'react-router';
import { SiteHeader } from '../../components/SiteHeader';
import { SiteFooter } from '../../components/SiteFooter';
import { usePageMeta } from '../../content/meta';
import { LEGAL, type LegalPage } from '../../content/legal';
import styles from './Legal.module.css';

const OTHERS: { page: LegalPage; to: string; label: string }[] = [
  { page: 'about', to: '/about', label: 'About Hyperdesk' },
  { page: 'terms', to: '/terms', label: 'Terms of Service' },
  { page: 'privacy', to: '/privacy', label: 'Privacy Policy' },
  { page: 'refund', to: '/refund-policy', label: 'Refund Policy' },
];

/** /terms, /privacy, /refund-policy and /about: long-form text pages linked from the footer. */
export default function Legal({ page }: { page: LegalPage }) {
  const c = LEGAL[page];
  usePageMeta(c.metaTitle, c.description);
  return (
    <div className={styles.page}>
      <SiteHeader />
      <main id="main" className={styles.main}>
        <div className={styles.band}>
          <div className={styles.bandInner}>
            <h1 className={styles.title}>{c.title}</h1>
            <p className={styles.intro}>{c.intro}</p>
            {c.updated ? <p className={styles.updated}>Last updated: {c.updated}</p> : null}
          </div>
        </div>
        <div className={styles.layout}>
          <article className={styles.article}>
            {c.sections.map((s) => (
              <section key={s.heading} className={styles.section}>
                <h2>{s.heading}</h2>
                {s.paragraphs.map((p) => <p key={p}>{p}</p>)}
                {s.list ? (
                  <ul>
                    {s.list.map((li) => <li key={li}>{li}</li>)}
                  </ul>
                ) : null}
              </section>
            ))}
          </article>
          <nav className={styles.aside} aria-label="More about Hyperdesk">
            <p className={styles.asideTitle}>More from Hyperdesk</p>
            <ul>
              {OTHERS.filter((o) => o.page !== page).map((o) => (
                <li key={o.to}><Link to={o.to}>{o.label}</Link></li>
              ))}
              <li><Link to="/faqs">FAQs and Help</Link></li>
            </ul>
          </nav>
        </div>
      </main>
      <SiteFooter />
    </div>
  );
}

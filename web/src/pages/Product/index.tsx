import { lazy, Suspense, useState } from 'react';
import { PLATFORMS } from '@hyperdesk/contract';
import { SiteHeader } from '../../components/SiteHeader';
import { SiteFooter } from '../../components/SiteFooter';
import { usePageMeta } from '../../content/meta';
import { PRODUCTS, type ProductName } from '../../content/products';
import { Icon } from '../Landing/art';
import { GetStarted } from '../Landing/GetStarted';
import styles from './Product.module.css';

const ContactDialog = lazy(() => import('../../components/ContactDialog').then((m) => ({ default: m.ContactDialog })));

const MACHINE = PLATFORMS.find((p) => !p.disabled) ?? PLATFORMS[0]!;
const SPECS: [string, string][] = [
  ['Platform', MACHINE.name],
  ['CPU', MACHINE.cpu],
  ['CPU cores', String(MACHINE.cpu_cores)],
  ['RAM', MACHINE.ram],
  ['GPU', MACHINE.gpu],
  ['GPU RAM', MACHINE.gpu_ram],
];

/** /HyperRender and /SwiftShader: what each product is, for whom, and how it is used. */
export default function Product({ name }: { name: ProductName }) {
  const p = PRODUCTS[name];
  usePageMeta(p.title, p.description);
  const [contactOpen, setContactOpen] = useState(false);
  const contactButton = (className?: string) => (
    <button type="button" className={className} onClick={() => setContactOpen(true)}>
      Contact Us
    </button>
  );

  return (
    <div className={styles.page}>
      <SiteHeader />
      <main id="main">
        <section className={styles.hero} aria-labelledby="product-title">
          <div className={styles.heroInner}>
            <p className={styles.eyebrow}>{p.eyebrow}</p>
            <h1 id="product-title" className={styles.title}>{p.headline}</h1>
            <p className={styles.lead}>{p.lead}</p>
            <div className={styles.actions}>
              <GetStarted className={styles.primary} />
              {p.cta.contact ? contactButton(styles.secondary) : null}
            </div>
          </div>
        </section>

        <section className={styles.section} aria-labelledby="highlights-title">
          <div className={styles.inner}>
            <h2 id="highlights-title" className={styles.h2}>Highlights</h2>
            <ul className={styles.highlights}>
              {p.highlights.map((h) => (
                <li key={h.title} className={styles.card}>
                  <span className={styles.icon}><Icon name={h.icon} /></span>
                  <h3>{h.title}</h3>
                  <p>{h.text}</p>
                </li>
              ))}
            </ul>
          </div>
        </section>

        <section className={`${styles.section} ${styles.alt}`} aria-labelledby="details-title">
          <div className={`${styles.inner} ${styles.split}`}>
            <div>
              <h2 id="details-title" className="sr-only">Details</h2>
              {p.sections.map((s) => (
                <div key={s.title} className={styles.block}>
                  <h3 className={styles.h3}>{s.title}</h3>
                  {s.paragraphs.map((t) => <p key={t}>{t}</p>)}
                  {s.points ? (
                    <ul className={styles.checks}>
                      {s.points.map((t) => <li key={t}><Icon name="check" /> {t}</li>)}
                    </ul>
                  ) : null}
                </div>
              ))}
            </div>
            <aside className={styles.specs} aria-labelledby="specs-title">
              <h3 id="specs-title" className={styles.h3}>Every machine</h3>
              <dl>
                {SPECS.map(([k, v]) => (
                  <div key={k} className={styles.specRow}>
                    <dt>{k}</dt>
                    <dd>{v}</dd>
                  </div>
                ))}
              </dl>
              <p className={styles.specNote}>Used from Google Chrome with a stable 2 mbps connection.</p>
            </aside>
          </div>
        </section>

        <section className={styles.cta} aria-labelledby="cta-title">
          <div className={styles.inner}>
            <h2 id="cta-title" className={styles.h2}>{p.cta.title}</h2>
            <p className={styles.ctaText}>{p.cta.text}</p>
            <div className={styles.actions}>
              {p.cta.contact ? contactButton(styles.primaryDark) : <GetStarted className={styles.primaryDark} />}
            </div>
          </div>
        </section>
      </main>
      <SiteFooter />
      {contactOpen ? (
        <Suspense fallback={null}>
          <ContactDialog open onOpenChange={setContactOpen} source="contact" />
        </Suspense>
      ) : null}
    </div>
  );
}

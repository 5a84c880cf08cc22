import { lazy, Suspense, useState } from 'react';
import { Link } from 'react-router';
import styles from './SiteFooter.module.css';

const loadContact = () => import('./ContactDialog');
const ContactDialog = lazy(() => loadContact().then((m) => ({ default: m.ContactDialog })));

const PRODUCT_LINKS = [
  { to: '/HyperRender', label: 'HyperRender' },
  { to: '/SwiftShader', label: 'SwiftShader' },
  { to: '/faqs', label: 'FAQs and Help' },
];
const COMPANY_LINKS = [
  { to: '/about', label: 'About' },
  { to: '/terms', label: 'Terms of Service' },
  { to: '/privacy', label: 'Privacy Policy' },
  { to: '/refund-policy', label: 'Refund Policy' },
];

/** Footer of the public pages: product and policy links and Contact Us. */
export function SiteFooter() {
  const [contactOpen, setContactOpen] = useState(false);
  return (
    <footer className={styles.footer}>
      <div className={styles.inner}>
        <div className={styles.brand}>
          <p className={styles.name}>Hyperdesk</p>
          <p className={styles.tagline}>Unreal Engine cloud machines, used from Chrome on any computer.</p>
        </div>
        <nav className={styles.col} aria-label="Product">
          <p className={styles.heading}>Product</p>
          <ul>
            {PRODUCT_LINKS.map((l) => (
              <li key={l.to}>
                <Link to={l.to}>{l.label}</Link>
              </li>
            ))}
            <li>
              <button type="button" className={styles.linkButton} onClick={() => setContactOpen(true)} onPointerEnter={() => void loadContact()}>
                Contact Us
              </button>
            </li>
          </ul>
        </nav>
        <nav className={styles.col} aria-label="Company and policies">
          <p className={styles.heading}>Company</p>
          <ul>
            {COMPANY_LINKS.map((l) => (
              <li key={l.to}>
                <Link to={l.to}>{l.label}</Link>
              </li>
            ))}
          </ul>
        </nav>
      </div>
      <p className={styles.legal}>© {new Date().getFullYear()} Hyperdesk. Unreal Engine is a trademark of Epic Games, Inc.; Hyperdesk is not affiliated with Epic Games.</p>
      {contactOpen ? (
        <Suspense fallback={null}>
          <ContactDialog open onOpenChange={setContactOpen} source="contact" />
        </Suspense>
      ) : null}
    </footer>
  );
}
